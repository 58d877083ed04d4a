export { systemClock, FakeClock, type Clock, type TimerHandle } from './clock.ts';
