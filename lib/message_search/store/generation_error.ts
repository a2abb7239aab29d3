/**
 * CorruptGenerationError: a referenced generation is damaged — its bytes do not hash to
 * its name, fail a checksum, or do not decode as a segment. Readers that meet it skip the
 * session and report it (F8: degraded + quarantine); its own module so the codec and the
 * file layer can both throw it without importing each other.
 */

/** A referenced generation is damaged: its bytes do not match its name or do not decode. */
export class CorruptGenerationError extends Error {
  /** The generation file name (`<hash16>.seg`). */
  readonly generation: string;
  constructor(generation: string, detail: string, options?: ErrorOptions) {
    super(`Generation "${generation}" is corrupt: ${detail}`, options);
    this.name = "CorruptGenerationError";
    this.generation = generation;
  }
}
