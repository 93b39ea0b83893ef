/** The clock is passed in everywhere so that pure code and tests never read the wall time. */
export type Clock = () => Date;

export const systemClock: Clock = () => new Date();
