import { createMemoryDeviceRepository } from '../../src/devices/device-repository.memory.ts';
import { deviceRepositoryContract } from './device-repository.contract.ts';

deviceRepositoryContract('memory', async () => {
  const repo = createMemoryDeviceRepository();
  return { repo, dispose: () => repo.close() };
});
