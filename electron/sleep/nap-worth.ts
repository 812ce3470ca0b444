// Which quiet stretches are worth a nap's model call. The night reads every message anyway, so a
// nap earns its call only where waiting for the night costs something: the person said something
// meant to last ("I only drink oat milk — keep that in mind", "我对花生过敏"), or so much has been
// said that the day's picture would be thin without it. Everything else waits for light sleep.
//
// Measured with `npm run bench:sleep` (LoCoMo dev: 128 sessions, 2,760 messages, each session a
// chat day that ends quiet): a nap on every stretch cost 4.64 calls per 100 messages (5.87 with
// light sleep, against a budget of 3). With this rule: 4 of 128 sessions carry a lasting statement,
// and a nap after 25 of the person's messages otherwise; checked on the LongMemEval dev haystacks
// too (3,446 sessions of a person with an assistant: 88 carry one).

/** Things a person says to be remembered, in English and Chinese: preferences, allergies, names, homes, work, asks. */
const LASTING_STATEMENT = new RegExp(
  [
    String.raw`\bi (?:always|never|only|usually) (?:eat|drink|take|have|wear|use|go to|wake|sleep)\b`,
    String.raw`\bi (?:prefer|can'?t stand|don'?t (?:eat|drink))\b`,
    String.raw`\bi(?:'m| am) (?:allergic|(?:a )?vegetarian|(?:a )?vegan)\b`,
    String.raw`\bmy (?:birthday|name) is\b`,
    String.raw`\bcall me\b`,
    String.raw`\bi (?:just )?moved to\b`,
    String.raw`\bi live in\b`,
    String.raw`\bi work (?:at|as|for)\b`,
    String.raw`\bplease remember\b`,
    String.raw`\bremember that i\b`,
    String.raw`\bdon'?t forget (?:that )?i\b`,
    String.raw`\bkeep (?:that|this|it) in mind\b`,
    String.raw`\bfrom now on\b`,
    '请记住|记住我|别忘了|以后请|我(?:总是|从不|只)(?:喝|吃|用|穿)|我(?:不)?喜欢|我讨厌|我对.{0,8}过敏|我的生日|我叫|我搬到|我住在|我在.{0,10}工作',
  ].join('|'),
  'i',
);

/** Of the person's messages since the last nap, this many are worth a nap even without a lasting statement. */
export const NAP_AFTER_USER_MESSAGES = 25;

/** Does this message say something the person means to last? (Curly apostrophes count as straight ones.) */
export function saysSomethingLasting(text: string): boolean {
  return LASTING_STATEMENT.test(text.replace(/[\u2018\u2019]/g, "'"));
}

/** Is a stretch with these messages from the person worth a nap now, rather than waiting for the night? */
export function worthANap(fromPerson: readonly string[]): boolean {
  return fromPerson.length >= NAP_AFTER_USER_MESSAGES || fromPerson.some(saysSomethingLasting);
}
