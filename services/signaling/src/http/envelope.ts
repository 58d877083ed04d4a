/** SPEC §12: every API answer is `{code, success, msg, data}`. */
export interface Envelope<T = unknown> {
  readonly code: number;
  readonly success: boolean;
  readonly msg: string;
  readonly data: T | null;
}

export const SUCCESS_CODE = 200;

export const ok = <T>(data: T): Envelope<T> => ({ code: SUCCESS_CODE, success: true, msg: 'ok', data });

export const failure = (code: number, msg: string): Envelope<never> => ({ code, success: false, msg, data: null });
