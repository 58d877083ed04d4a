/** GB/T 28181 §D.1: device, channel and platform ids are 20-digit codes. */
export const GB_ID = /^\d{20}$/;

export const isGbId = (value: string): boolean => GB_ID.test(value);
