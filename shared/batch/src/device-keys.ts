/**
 * Whether a batch may carry this device id. A batched `IN (...)` read matches its rows to the asked ids by
 * string equality, while a lone `device_id = ?` matches by the column's collation: case-insensitively
 * for gb_device, and ignoring trailing spaces for every PAD SPACE collation. A digits-only id (every
 * GB/T 28181 id) reads the same either way; any other one must be read alone, by the single-id statement.
 * One rule for every store that batches device reads (signaling's devices and reports, cascade's shares).
 */
export const batchableDeviceId = (id: string): boolean => /^[0-9]{1,64}$/.test(id);
