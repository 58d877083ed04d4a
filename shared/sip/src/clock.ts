// The one clock of the platform lives in @vms/clock; re-exported so this package's imports stay local.
export { systemClock, FakeClock, type Clock, type TimerHandle } from '@vms/clock';
