// The defaults of `company-data mcp` that its help states: a module of its own, so that declaring
// the command at start-up loads nothing else of the server.

/** --confirm-above when not given: a paid call that can cost more asks the user first. */
export const DEFAULT_CONFIRM_ABOVE = 5;
