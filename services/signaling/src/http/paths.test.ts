import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isWebhookPath, stripServicePrefix } from './paths.ts';

describe('path normalisation (ROUTE-7)', () => {
  it('maps the monolith form onto the microservice form', () => {
    assert.equal(stripServicePrefix('/blade-iot/vms/devices?current=2'), '/vms/devices?current=2');
    assert.equal(stripServicePrefix('/blade-iot/vms/webhook/on_stream_changed'), '/vms/webhook/on_stream_changed');
    assert.equal(stripServicePrefix('/blade-iot'), '/');
    assert.equal(stripServicePrefix('/blade-iot?x=1'), '/?x=1');
  });

  it('leaves other paths alone', () => {
    assert.equal(stripServicePrefix('/vms/devices'), '/vms/devices');
    assert.equal(stripServicePrefix('/blade-iotx/vms/devices'), '/blade-iotx/vms/devices');
    assert.equal(stripServicePrefix('/other/blade-iot/vms'), '/other/blade-iot/vms');
  });

  it('recognises webhook paths after normalisation', () => {
    assert.equal(isWebhookPath('/vms/webhook/on_publish'), true);
    assert.equal(isWebhookPath('/vms/webhooks'), false);
    assert.equal(isWebhookPath('/vms/devices'), false);
  });
});
