// The rolling summary travels with every later request of its conversation: a line of it that holds
// a credential is dropped before it is stored, like any text about to be kept.
import { describe, expect, it } from 'vitest';
import { cleanSummary } from './schemas.js';

describe('the rolling summary keeps no credential', () => {
  it('drops the line that holds one and keeps the rest', () => {
    const key = `sk_live_${'4eC39HqLyjWDarjtT1zdp7dc'}`;
    const summary = cleanSummary(
      `Ada introduced herself; she teaches maths in Leeds.\nShe pasted her Stripe key ${key} by mistake.\nShe plans a trip to Porto.`,
    );
    expect(summary).toBe('Ada introduced herself; she teaches maths in Leeds.\nShe plans a trip to Porto.');
  });

  it('drops a password said in Chinese', () => {
    expect(cleanSummary('她叫小林。\n她说邮箱密码是 hunter2-Quartz-77')).toBe('她叫小林。');
  });
});
