/**
 * Written notes for RESULTS.md: why a missed target is missed (from
 * profiling), and how to read the tables. Keyed by target id.
 */
export const notes = {
  loop: "Loop overhead: TODO",
  streaming: "Streaming: TODO",
  pauseSize: "Pause size: TODO",
  resume: "Resume: TODO",
  general: "TODO"
} as const
