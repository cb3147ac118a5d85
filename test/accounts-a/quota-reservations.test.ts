import { describe, expect, it } from 'vitest';
import { addReservations, containerReservation, proxiedReservation } from '../../src/daemon/services/accounts/quota-use.js';

/**
 * The arithmetic behind quota's CPU and memory rows (spec 1 §8.3, §8.4; docs/decisions/cli-small.md):
 * every size with its proxy, explicit requests, and sums that stay exact. The readout and the
 * refusals through a real daemon are in test/cli/quota-reservations.test.ts.
 */
const GiB = 1024 ** 3;

describe('what an instance holds', () => {
  it('each instance size of §8.4 with the proxy of 500m and 256 MiB: limits add up, requests are 10 percent of each CPU (at least 100m) and all memory', () => {
    const sizes = { small: { cpus: 0.5, memoryBytes: GiB / 2 }, medium: { cpus: 1, memoryBytes: GiB }, large: { cpus: 2, memoryBytes: 2 * GiB }, xlarge: { cpus: 4, memoryBytes: 4 * GiB } };
    const held = Object.fromEntries(Object.entries(sizes).map(([name, size]) => [name, proxiedReservation(size)]));
    expect(held).toEqual({
      small: { cpu_requests: 0.2, memory_requests: 768, cpu_limits: 1, memory_limits: 768 },
      // Spec 1 §8.3: "A medium instance counts 1.5 CPU and 1.25 GiB against the maximums".
      medium: { cpu_requests: 0.2, memory_requests: 1280, cpu_limits: 1.5, memory_limits: 1280 },
      large: { cpu_requests: 0.3, memory_requests: 2304, cpu_limits: 2.5, memory_limits: 2304 },
      xlarge: { cpu_requests: 0.5, memory_requests: 4352, cpu_limits: 4.5, memory_limits: 4352 },
    });
  });

  it('requests a workload states replace the rule (a serverless revision); a container without a proxy is its own figures', () => {
    expect(proxiedReservation({ cpus: 1, memoryBytes: GiB / 2 }, { cpus: 0.25, memoryBytes: GiB / 4 })).toEqual({ cpu_requests: 0.35, memory_requests: 512, cpu_limits: 1.5, memory_limits: 768 });
    expect(containerReservation({ cpus: 1, memoryBytes: GiB / 4 })).toEqual({ cpu_requests: 0.1, memory_requests: 256, cpu_limits: 1, memory_limits: 256 });
  });

  it('sums are exact to the millicore: three 100m reservations are 0.3, not 0.30000000000000004', () => {
    const one = containerReservation({ cpus: 1, memoryBytes: GiB / 4 });
    expect(addReservations([one, one, one])).toEqual({ cpu_requests: 0.3, memory_requests: 768, cpu_limits: 3, memory_limits: 768 });
    expect(addReservations([])).toEqual({ cpu_requests: 0, memory_requests: 0, cpu_limits: 0, memory_limits: 0 });
  });
});
