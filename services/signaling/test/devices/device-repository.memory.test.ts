import { createMemoryDeviceRepository } from '../../src/devices/device-repository.memory.ts';
import { deviceRepositoryContract } from './device-repository.contract.ts';

deviceRepositoryContract('memory', async (limits) => {
  const repo = createMemoryDeviceRepository(limits);
  return { repo, dispose: () => repo.close() };
});
