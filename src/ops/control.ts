// What an operation is given besides its input and context: a stop, and somewhere to say how far
// it has come. A face makes both: the CLI from its signals and its spinner or progress line, the
// MCP server from a client's cancel, a closed stdin or SIGTERM, and from its progressToken.

/** How far an operation has come: `done` of `total` units (domains, seeds, pages). */
export type Progress = (done: number, total: number | undefined, message?: string) => void;

export interface OpControl {
  /**
   * The stop: once it fires no purchase starts; requests in flight settle and are recorded, and
   * the operation returns what it has, marked incomplete.
   */
  signal?: AbortSignal;
  progress?: Progress;
}
