import type { RepFigures } from "../../bench/report.js";

/** The figures of one made-up repetition (N=10 in one channel), with `overrides`. */
export function rep(overrides: Partial<RepFigures>): RepFigures {
  return {
    n: 10,
    channels: 1,
    rep: 1,
    wallSeconds: 20,
    ackP50: 2,
    ackP99: 10,
    firstTextP50: 300,
    firstTextP95: 900,
    askedFirstTextP50: 400,
    askedFirstTextP95: 1_000,
    outsideFirstTextP50: 300,
    outsideFirstTextP95: 900,
    outsideDisagreementMs: 0,
    lagP95Seconds: 1.5,
    lagMaxSeconds: 3,
    slackCallsPerAnswer: 4,
    slack429: 0,
    service429: 0,
    fidelity: 1,
    peakRssMb: 150,
    idleRssMb: 100,
    endRssMb: 140,
    endHeapUsedMb: 30,
    cpuMsPerAnswer: 40,
    unsettled: 0,
    meanAnswerChars: 1500,
    floor: { firstTextP50: 0, firstTextP95: 5_000, lagMaxSeconds: 6, wallSeconds: 10 },
    ...overrides,
  };
}
