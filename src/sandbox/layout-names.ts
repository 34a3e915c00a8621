// The names of the sandbox's layouts (src/sandbox/layouts.ts), apart so that the command line can
// offer them without loading the sandbox.
export const LAYOUT_NAMES = ['flat', 'grouped', 'enveloped', 'metered'] as const;
export type LayoutName = (typeof LAYOUT_NAMES)[number];

export function isLayoutName(name: string): name is LayoutName {
  return (LAYOUT_NAMES as readonly string[]).includes(name);
}
