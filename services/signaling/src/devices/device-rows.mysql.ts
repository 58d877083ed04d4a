// mysql2's row packets for gb_device / gb_channel; the fields and their mapping are shared with SQLite (device-rows.ts).
import type { RowDataPacket } from 'mysql2/promise';
import type { ChannelRowFields, DeviceRowFields } from './device-rows.ts';

export interface CountRow extends RowDataPacket {
  n: number;
}

export interface DeviceRow extends RowDataPacket, DeviceRowFields<Date> {}

export interface ChannelRow extends RowDataPacket, ChannelRowFields<Date> {}
