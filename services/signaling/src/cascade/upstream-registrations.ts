// The cascade leader's registrations to its upstream platforms (SPEC CASC-2, FAIL-2): one
// UpstreamRegistration per enabled platform, all started when this instance becomes the leader and
// all stopped (without unregistering) when it stops being the leader. A platform edited while leading
// restarts its registration. Registration events are logged here, once, where they are handled.
import type { SnGenerator } from '@vms/gb28181';
import { UpstreamRegistration, type PlatformRepository, type RegistrationEvent, type UpstreamPlatform, type UpstreamSipClient } from '@vms/cascade';
import type { Logger } from 'pino';
import type { Clock } from '../core/clock.ts';

export interface UpstreamRegistrationsOptions {
  readonly platforms: PlatformRepository;
  readonly sip: UpstreamSipClient;
  readonly clock: Clock;
  readonly sn: SnGenerator;
  readonly log: Logger;
  /**
   * Of the enabled platforms, the ones to register with (upstream-choice.ts: one per redundancy group of
   * the routing table). Default: all of them.
   */
  readonly choose?: ((enabled: readonly UpstreamPlatform[]) => UpstreamPlatform[]) | undefined;
  /** Every registration event, after it is logged (the routing health counts the outcomes). */
  readonly onEvent?: ((serverId: string, e: RegistrationEvent) => void) | undefined;
}

export class UpstreamRegistrations {
  readonly #o: UpstreamRegistrationsOptions;
  readonly #log: Logger;
  readonly #running = new Map<string, UpstreamRegistration>();
  #active = false;
  /** Bumped by every activate/deactivate: a platform listing that resolves late is dropped. */
  #generation = 0;

  constructor(opts: UpstreamRegistrationsOptions) {
    this.#o = opts;
    this.#log = opts.log.child({ component: 'upstream-registrations' });
  }

  /** Registered (or registering) platforms by server id. */
  get running(): ReadonlyMap<string, UpstreamRegistration> {
    return this.#running;
  }

  /** CASC-2 / FAIL-2: this instance leads now — register to every enabled platform at once. */
  async activate(): Promise<void> {
    this.#active = true;
    const generation = ++this.#generation;
    let enabled: UpstreamPlatform[];
    try {
      enabled = await this.#o.platforms.listEnabled();
    } catch (err) {
      this.#log.error({ err }, 'upstream platforms unreadable: not registering upstream');
      return;
    }
    if (generation !== this.#generation) return; // deactivated meanwhile
    for (const p of this.#chosen(enabled)) this.#startOne(p);
  }

  /** Lost the leadership or closing: stop all upstream traffic, without unregistering. */
  deactivate(): void {
    this.#active = false;
    this.#generation++;
    for (const reg of this.#running.values()) reg.stop();
    this.#running.clear();
  }

  /**
   * While leading: bring the running set in line with the store (edits made on other instances):
   * start new enabled platforms, stop removed or disabled ones, restart edited ones.
   */
  async reconcile(): Promise<void> {
    if (!this.#active) return;
    const generation = this.#generation;
    const enabled = this.#chosen(await this.#o.platforms.listEnabled());
    if (generation !== this.#generation || !this.#active) return;
    const wanted = new Map(enabled.map((p) => [p.serverId, p]));
    for (const [id, reg] of this.#running) {
      const p = wanted.get(id);
      if (p === undefined || JSON.stringify(p) !== JSON.stringify(reg.platform)) {
        reg.stop();
        this.#running.delete(id);
      }
    }
    for (const p of enabled) if (!this.#running.has(p.serverId)) this.#startOne(p);
  }

  /** A platform was created, edited or removed (null): restart its registration when leading. */
  async platformChanged(serverId: string): Promise<void> {
    this.#running.get(serverId)?.stop();
    this.#running.delete(serverId);
    if (!this.#active) return;
    const generation = this.#generation;
    const p = await this.#o.platforms.get(serverId);
    if (generation !== this.#generation || p === null || !p.enabled) return;
    if (this.#o.choose !== undefined) return this.reconcile(); // its group's choice may change
    this.#startOne(p);
  }

  #chosen(enabled: UpstreamPlatform[]): UpstreamPlatform[] {
    const choose = this.#o.choose;
    if (choose === undefined) return enabled;
    const chosen = choose(enabled);
    for (const p of enabled) if (!chosen.includes(p)) this.#log.debug({ platformId: p.serverId }, 'upstream platform held in reserve by its routing group');
    return chosen;
  }

  #startOne(platform: UpstreamPlatform): void {
    this.#running.get(platform.serverId)?.stop();
    const log = this.#log.child({ platformId: platform.serverId, upstream: `${platform.host}:${platform.port}` });
    const reg = new UpstreamRegistration({
      platform,
      sip: this.#o.sip,
      clock: this.#o.clock,
      sn: this.#o.sn,
      onEvent: (e) => {
        logRegistrationEvent(log, e);
        this.#o.onEvent?.(platform.serverId, e);
      },
    });
    this.#running.set(platform.serverId, reg);
    log.info('registering to upstream platform');
    reg.start();
  }
}

function logRegistrationEvent(log: Logger, e: RegistrationEvent): void {
  switch (e.type) {
    case 'registered':
      if (e.refresh) log.debug({ expiresS: e.expiresS }, 'upstream registration refreshed');
      else log.info({ expiresS: e.expiresS }, 'registered to upstream platform');
      return;
    case 'offline':
      log.warn({ reason: e.reason }, 'upstream platform offline');
      return;
    case 'register-failed':
      log.warn({ status: e.status, attempt: e.attempt, retryInMs: e.retryInMs, err: e.error }, 'upstream registration failed');
      return;
    case 'keepalive-failed':
      log.debug({ status: e.status, consecutive: e.consecutive, err: e.error }, 'upstream keepalive failed');
      return;
  }
}
