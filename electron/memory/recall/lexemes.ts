// Irregular English forms, joined to their base for ranking. Postgres's 'english' stemmer (Snowball)
// strips regular endings — "plays", "played", "playing" are all 'play' — but leaves irregular forms
// apart: "won" is not 'win', "bought" is not 'buy', "children" is not 'child'. A question asks in one
// form ("When did Nate win his first tournament?") and a memory says it in another ("Nate won a
// regional tournament"), so the in-memory indexes (lexical-index.ts) and the query's words read
// every lexeme through canonicalLexeme: one lexeme for all the forms of a word, on both sides.
// The SQL side (a boolean query's matches) keeps Postgres's own lexemes; only the ranking is joined.
//
// Each entry: the base's lexeme, then the lexemes of its irregular forms — Postgres's stems, which
// for these forms are the words themselves except the few named in lexemes.test.ts (leave → leav,
// fly → fli). Left out: forms that are mostly another word ("bit" of bite: a bit; "rose" of rise:
// the flower; "bore" of bear: bored), forms of stop words (was, had, did — never indexed), and forms
// whose stem is not the word (arose, forbade, forgave, overcame, geese).
//
// Measured with `npm run bench:memory` (LoCoMo dev observations, passive recall): an evidence memory
// among the top 5 hits for 0.721 → 0.737 of the questions, the top 10 for 0.786 → 0.799. On turns
// (bench:locomo, session source, R@5 / R@10 / R@20): LoCoMo dev 0.633 / 0.726 / 0.801 → 0.631 /
// 0.728 / 0.805 together with query.ts's question frames; LongMemEval dev 0.690 / 0.806 / 0.880 →
// 0.690 / 0.792 / 0.880 with this alone (one question of 72 left the top 10), 0.704 / 0.792 / 0.880
// with the frames too.
const IRREGULAR = `
awak awok awoken | beat beaten | becom becam | begin began begun | bend bent | bite bitten | bleed bled
blow blew blown | break broke broken | breed bred | bring brought | build built | burn burnt | buy bought
catch caught | choos chose chosen | cling clung | come came | creep crept | deal dealt | dig dug
draw drew drawn | dream dreamt | drink drank drunk | drive drove driven | eat ate eaten | fall fell fallen
feed fed | feel felt | fight fought | find found | flee fled | fli flew flown | forbid forbidden
forget forgot forgotten | forgiv forgiven | freez froze frozen | get got gotten | give gave given
go went gone | grow grew grown | hang hung | hear heard | hide hid hidden | hold held | keep kept
kneel knelt | know knew known | lead led | lean leant | leap leapt | learn learnt | leav left | lend lent
light lit | lose lost | make made | mean meant | meet met | mistak mistook mistaken | pay paid
ride rode ridden | ring rang rung | rise risen | run ran | say said | see saw seen | seek sought
sell sold | send sent | shake shook shaken | shine shone | shoot shot | show shown | shrink shrank shrunk
sing sang sung | sink sank sunk | sit sat | sleep slept | slide slid | speak spoke spoken | speed sped
spend spent | spin spun | spit spat | spring sprang sprung | stand stood | steal stole stolen
stick stuck | sting stung | stink stank stunk | strike struck | strive strove striven | swear swore sworn
sweep swept | swim swam swum | swing swung | take took taken | teach taught | tear tore torn | tell told
think thought | throw threw thrown | understand understood | wake woke woken | wear wore worn
weep wept | win won | withdraw withdrew withdrawn | write wrote written
child children | man men | woman women | foot feet | tooth teeth | mous mice
`;

/** Irregular form's lexeme → its base's lexeme. */
export const IRREGULAR_LEXEMES: ReadonlyMap<string, string> = new Map(
  IRREGULAR.split(/[|\n]/)
    .map((entry) => entry.trim().split(/\s+/))
    .filter((words) => words.length > 1)
    .flatMap(([base, ...forms]) => forms.map((form) => [form, base!] as const)),
);

/** The lexeme ranking uses for a Postgres lexeme: its base's for an irregular form, itself otherwise. */
export function canonicalLexeme(lexeme: string): string {
  return IRREGULAR_LEXEMES.get(lexeme) ?? lexeme;
}
