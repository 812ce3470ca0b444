// The time a query names, as a window [from, to] of instants: "yesterday", "two weeks ago", "last
// May", "in March 2023", "on 8 May, 2023", "the week before August 3", "over the past month",
// 上个月, 两周前, 去年五月, 2023年5月3日. Pure: the text, the instant the person asked at ("now": the
// time of their message) and the calendar's offset from UTC in, the window and the spans of text it
// was read from out. Recall ranks what lies inside the window a little higher (a soft factor, never
// a filter: search.ts), and leaves the time words out of the words it matches — "May" the month is
// not a word a turn about May has to contain.
//
// What is read, and how:
// - absolute dates: a day ("May 3, 2023", "3rd of May 2023", "2023-05-03", 2023年5月3日, "May 3" =
//   the last May 3 up to now), a month ("May 2023", "in May" / "last May" = the last May before now;
//   early / mid / late, the first / second half, the first … fourth week of it), a season ("last
//   summer", "summer 2021"; northern), a year ("in 2022", 2022年). A month name counts only beside a
//   day, a year or a word that makes it a time ("in", "last", "since"…): "May said" is a name.
// - relative to now: yesterday, today, last night, N days / weeks / months / years ago (± half the
//   unit), last week / weekend / month / year and last Friday (the calendar's), this week / month /
//   year (up to now), the past N days / weeks… and "in the last month" (rolling), recently / lately
//   (RECENT_DAYS), and the Chinese forms of these.
// - relative to a date the question also names ("last weekend before April 10, 2023", "the week
//   before August 3", "two weeks before August 11", "last Friday on 23 January"): the relative part
//   is read from that date, and the window also covers the date itself (what happened is told then).
// - what points at the future (tomorrow, tonight, next week, "this weekend" on a weekday) names no
//   window of the past; its words are time words all the same.
// - what asks for the newest ("most recently", "the latest", "more recently", 最近一次, 最新): no
//   window — "the last 30 days" is not what "most recently" means — but `latest`, and recall ranks
//   the newer of the matching turns higher (search.ts).
// Several dates in one question: the window spans them all ("between August 11 and August 15").
// "How many days ago…" asks for a time and names none.

export interface TimeWindow {
  /** Epoch ms, inclusive. */
  from: number;
  /** Epoch ms, exclusive. */
  to: number;
}

export interface TimeReading {
  /** The window the text names (null: none, or only the future). */
  window: TimeWindow | null;
  /** True when the window comes from dates named outright only ("on 8 May, 2023", "in March 2024"): nothing is read relative to now. */
  named: boolean;
  /** [start, end) of each time expression in the text (future ones too): the words recall leaves out. */
  spans: [number, number][];
  /** True when the text asks for the newest of what it names ("Which did I take most recently?"). */
  latest: boolean;
}

/** "recently", "lately", 最近: the last this many days. */
export const RECENT_DAYS = 30;

const DAY = 86_400_000;
const MONTHS = ['january', 'february', 'march', 'april', 'may', 'june', 'july', 'august', 'september', 'october', 'november', 'december'];
const MONTH_RE = '(jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)';
const WEEKDAYS = ['sunday', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday'];
const WEEKDAY_RE = '(sunday|monday|tuesday|wednesday|thursday|friday|saturday)';
const NUMBER_WORDS: Record<string, number> = {
  a: 1,
  an: 1,
  one: 1,
  two: 2,
  three: 3,
  four: 4,
  five: 5,
  six: 6,
  seven: 7,
  eight: 8,
  nine: 9,
  ten: 10,
  eleven: 11,
  twelve: 12,
  'a couple of': 2,
  'a couple': 2,
  couple: 2,
  'a few': 3,
  few: 3,
  several: 3,
};
const NUM_RE = '(\\d{1,3}|a couple of|a couple|a few|several|an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)';
const UNIT_RE = '(day|week|fortnight|month|year)s?';
/** A year as a time: after these words (or beside a month or season). */
const YEAR_LEAD = '(?:in|during|of|since|from|until|till|by|throughout|early|mid|late|before|after|around)';
/** A month name is a time after these words (otherwise "May" may be a name, "march" a verb). */
const MONTH_LEAD =
  '(last|this|in|during|since|until|till|by|before|after|early|mid|late|of|from|through|around|the beginning of|the start of|the end of|the middle of|the first half of|the second half of)';
const PART_RE = '(?:(early|mid|late|the beginning of|the start of|the end of|the middle of|the first half of|the second half of)\\s+)?';

const CN_DIGITS: Record<string, number> = { 〇: 0, 零: 0, 一: 1, 二: 2, 两: 2, 三: 3, 四: 4, 五: 5, 六: 6, 七: 7, 八: 8, 九: 9, 十: 10, 几: 3, 半: 0.5 };
const CN_NUM = '(\\d{1,3}|[〇零一二两三四五六七八九十几半]{1,3})';
/** A month or day number: no 几 (几月 asks which month) or 半. */
const CN_ORD = '(\\d{1,2}|[一二三四五六七八九十]{1,3})';

/** A Chinese or Arabic number: 十二 12, 二十 20, 三 3, 12 12; NaN when not one. */
function cnNumber(s: string): number {
  if (/^\d+$/.test(s)) return Number(s);
  if (s === '半') return 0.5;
  if (s.includes('十')) {
    const [a, b] = s.split('十');
    const tens = a ? (CN_DIGITS[a] ?? NaN) : 1;
    const ones = b ? (CN_DIGITS[b] ?? NaN) : 0;
    return tens * 10 + ones;
  }
  if (s.length === 4) return Number([...s].map((c) => CN_DIGITS[c] ?? NaN).join(''));
  return s.length === 1 ? (CN_DIGITS[s] ?? NaN) : NaN;
}

function numberOf(s: string): number {
  const w = s.toLowerCase();
  return /^\d+$/.test(w) ? Number(w) : (NUMBER_WORDS[w] ?? NaN);
}

function monthOf(name: string): number {
  const n = name.toLowerCase().slice(0, 3);
  return MONTHS.findIndex((m) => m.startsWith(n));
}

/** Calendar arithmetic in the person's offset: local fields ↔ instants. */
class Calendar {
  constructor(private readonly offsetMs: number) {}
  /** The instant local midnight of (y, m, d) is; months and days may overflow (Date.UTC normalises). */
  at(y: number, m: number, d: number, hours = 0): number {
    return Date.UTC(y, m, d, hours) - this.offsetMs;
  }
  fields(t: number): { y: number; m: number; d: number; wd: number } {
    const x = new Date(t + this.offsetMs);
    return { y: x.getUTCFullYear(), m: x.getUTCMonth(), d: x.getUTCDate(), wd: x.getUTCDay() };
  }
  dayStart(t: number): number {
    const f = this.fields(t);
    return this.at(f.y, f.m, f.d);
  }
  /** Monday of t's week. */
  weekStart(t: number): number {
    const f = this.fields(t);
    return this.at(f.y, f.m, f.d - ((f.wd + 6) % 7));
  }
}

type PieceBody =
  /** `inYear`: a date named without its year ("August 11"), read again in a year the question names. */
  | { kind: 'absolute'; window: TimeWindow; inYear?: (y: number) => TimeWindow }
  /** Read from an anchor instant (now, or a date the question names). */
  | { kind: 'relative'; at: (anchor: number, cal: Calendar) => TimeWindow | null; before?: boolean }
  | { kind: 'future' }
  /** "most recently", "the latest": no window, but the newest of what matches is asked for. */
  | { kind: 'latest' };
type Piece = PieceBody & { start: number; end: number };

interface Rule {
  re: RegExp;
  make: (m: RegExpExecArray, now: number, cal: Calendar) => PieceBody | null;
}

const unitMs = (unit: string): number => {
  const u = unit.toLowerCase();
  return u.startsWith('day') ? DAY : u.startsWith('week') ? 7 * DAY : u.startsWith('fortnight') ? 14 * DAY : u.startsWith('month') ? 30.44 * DAY : 365.25 * DAY;
};

/** "N units ago" from the anchor: the instant ± half a unit (at least a day). */
function ago(n: number, unit: number): (anchor: number) => TimeWindow {
  return (anchor) => {
    const centre = anchor - n * unit;
    const half = Math.max(DAY, unit / 2);
    return { from: centre - half, to: Math.min(anchor, centre + half) };
  };
}

/** The calendar unit before the anchor's: last week (Monday to Monday), last month, last year. */
function previousUnit(unit: string): (anchor: number, cal: Calendar) => TimeWindow {
  const u = unit.toLowerCase();
  return (anchor, cal) => {
    const f = cal.fields(anchor);
    if (u.startsWith('day')) return { from: cal.at(f.y, f.m, f.d - 1), to: cal.at(f.y, f.m, f.d) };
    if (u === 'weekend') {
      // The Saturday and Sunday that ended before the anchor's day (on a weekend day: the one before).
      const saturday = cal.at(f.y, f.m, f.d - ((f.wd + 1) % 7 || 7));
      const back = f.wd === 0 ? 7 * DAY : 0;
      return { from: saturday - back, to: saturday - back + 2 * DAY };
    }
    if (u.startsWith('week')) {
      const monday = cal.weekStart(anchor);
      return { from: monday - 7 * DAY, to: monday };
    }
    if (u.startsWith('month')) return { from: cal.at(f.y, f.m - 1, 1), to: cal.at(f.y, f.m, 1) };
    return { from: cal.at(f.y - 1, 0, 1), to: cal.at(f.y, 0, 1) };
  };
}

/** This week / month / year, from its start to the anchor. */
function currentUnit(unit: string): (anchor: number, cal: Calendar) => TimeWindow {
  const u = unit.toLowerCase();
  return (anchor, cal) => {
    const f = cal.fields(anchor);
    const from = u.startsWith('week') ? cal.weekStart(anchor) : u.startsWith('month') ? cal.at(f.y, f.m, 1) : cal.at(f.y, 0, 1);
    return { from, to: anchor };
  };
}

/** The last `weekday` strictly before the anchor's day. */
function lastWeekday(weekday: number): (anchor: number, cal: Calendar) => TimeWindow {
  return (anchor, cal) => {
    const f = cal.fields(anchor);
    const back = (f.wd - weekday + 7) % 7 || 7;
    const from = cal.at(f.y, f.m, f.d - back);
    return { from, to: from + DAY };
  };
}

/** A month of a year, or part of it. */
function monthWindow(cal: Calendar, y: number, m: number, part?: string): TimeWindow {
  const from = cal.at(y, m, 1);
  const to = cal.at(y, m + 1, 1);
  const p = (part ?? '').toLowerCase();
  const third = (to - from) / 3;
  if (p === 'early' || p === 'the beginning of' || p === 'the start of') return { from, to: from + third };
  if (p === 'mid' || p === 'the middle of') return { from: from + third, to: to - third };
  if (p === 'late' || p === 'the end of') return { from: to - third, to };
  if (p === 'the first half of') return { from, to: from + (to - from) / 2 };
  if (p === 'the second half of') return { from: from + (to - from) / 2, to };
  return { from, to };
}

/** The year of the last month `m` that began before now (`strict`: before this month). */
function lastYearOfMonth(now: number, cal: Calendar, m: number, strict: boolean): number {
  const f = cal.fields(now);
  return m < f.m || (m === f.m && !strict) ? f.y : f.y - 1;
}

/** The year of the last day (m, d) up to now's day. */
function lastYearOfDay(now: number, cal: Calendar, m: number, d: number): number {
  const f = cal.fields(now);
  return m < f.m || (m === f.m && d <= f.d) ? f.y : f.y - 1;
}

const SEASONS: Record<string, number> = { spring: 2, summer: 5, autumn: 8, fall: 8, winter: 11, 春: 2, 夏: 5, 秋: 8, 冬: 11 };

/** A season (three months from `first`) of the year it starts in. */
function seasonWindow(cal: Calendar, y: number, first: number): TimeWindow {
  return { from: cal.at(y, first, 1), to: cal.at(y, first + 3, 1) };
}

/** The start year of the last season `first` that began before now (strict: not the current one). */
function lastSeasonYear(now: number, cal: Calendar, first: number, strict: boolean): number {
  const f = cal.fields(now);
  // Months since the season's start this year (negative: it has not begun this year).
  const since = f.m - first + (first === 11 && f.m < 2 ? 12 : 0);
  const y = first === 11 && f.m < 2 ? f.y - 1 : f.y;
  if (since < 0) return y - 1;
  return strict && since < 3 ? y - 1 : y;
}

const day = (cal: Calendar, y: number, m: number, d: number): TimeWindow => ({ from: cal.at(y, m, d), to: cal.at(y, m, d + 1) });
/** A real date (February 31 is not one); years 1900–2200. */
const valid = (y: number, m: number, d = 1) =>
  Number.isInteger(m) && m >= 0 && m < 12 && Number.isInteger(d) && d >= 1 && d <= new Date(Date.UTC(y, m + 1, 0)).getUTCDate() && y >= 1900 && y <= 2200;

/** The English and Chinese rules, most specific first: a span taken by one is not read again. */
const RULES: Rule[] = [
  // ---- absolute days ----
  {
    re: new RegExp(`\\b${MONTH_RE}\\.?\\s+(\\d{1,2})(?:st|nd|rd|th)?,?\\s*((?:19|20)\\d{2})\\b`, 'gi'),
    make: (m, _now, cal) => {
      const mo = monthOf(m[1]!);
      const [d, y] = [Number(m[2]), Number(m[3])];
      return valid(y, mo, d) ? { kind: 'absolute', window: day(cal, y, mo, d) } : null;
    },
  },
  {
    re: new RegExp(`\\b(\\d{1,2})(?:st|nd|rd|th)?\\s+(?:of\\s+)?${MONTH_RE}\\.?,?\\s*((?:19|20)\\d{2})\\b`, 'gi'),
    make: (m, _now, cal) => {
      const mo = monthOf(m[2]!);
      const [d, y] = [Number(m[1]), Number(m[3])];
      return valid(y, mo, d) ? { kind: 'absolute', window: day(cal, y, mo, d) } : null;
    },
  },
  {
    re: /\b((?:19|20)\d{2})-(\d{1,2})-(\d{1,2})\b/g,
    make: (m, _now, cal) => {
      const [y, mo, d] = [Number(m[1]), Number(m[2]) - 1, Number(m[3])];
      return valid(y, mo, d) ? { kind: 'absolute', window: day(cal, y, mo, d) } : null;
    },
  },
  {
    re: new RegExp(`((?:19|20)\\d{2}|[〇零一二三四五六七八九]{4})\\s*年\\s*${CN_ORD}\\s*月\\s*${CN_ORD}\\s*[日号]`, 'g'),
    make: (m, _now, cal) => {
      const [y, mo, d] = [cnNumber(m[1]!), cnNumber(m[2]!) - 1, cnNumber(m[3]!)];
      return valid(y, mo, d) ? { kind: 'absolute', window: day(cal, y, mo, d) } : null;
    },
  },
  // ---- weeks and months of a year ----
  {
    re: new RegExp(`\\b(?:the\\s+)?(first|second|third|fourth|last)\\s+week\\s+of\\s+${MONTH_RE}(?:,?\\s*((?:19|20)\\d{2}))?\\b`, 'gi'),
    make: (m, now, cal) => {
      const mo = monthOf(m[2]!);
      const y = m[3] ? Number(m[3]) : lastYearOfMonth(now, cal, mo, false);
      const which = m[1]!.toLowerCase();
      if (which === 'last') {
        const end = cal.at(y, mo + 1, 1);
        return { kind: 'absolute', window: { from: end - 7 * DAY, to: end } };
      }
      const k = ['first', 'second', 'third', 'fourth'].indexOf(which);
      return { kind: 'absolute', window: { from: cal.at(y, mo, 1 + 7 * k), to: cal.at(y, mo, 8 + 7 * k) } };
    },
  },
  {
    re: new RegExp(`\\b${PART_RE}${MONTH_RE}\\.?,?\\s+((?:19|20)\\d{2})\\b`, 'gi'),
    make: (m, _now, cal) => {
      const mo = monthOf(m[2]!);
      return { kind: 'absolute', window: monthWindow(cal, Number(m[3]), mo, m[1]) };
    },
  },
  {
    re: new RegExp(`((?:19|20)\\d{2}|[〇零一二三四五六七八九]{4})\\s*年\\s*${CN_ORD}\\s*月份?`, 'g'),
    make: (m, _now, cal) => {
      const [y, mo] = [cnNumber(m[1]!), cnNumber(m[2]!) - 1];
      return valid(y, mo) ? { kind: 'absolute', window: monthWindow(cal, y, mo) } : null;
    },
  },
  // ---- a day or month without its year: the last one up to now ----
  {
    re: new RegExp(`\\b${MONTH_RE}\\.?\\s+(\\d{1,2})(?:st|nd|rd|th)?\\b(?!\\s*[:.]\\d)`, 'gi'),
    make: (m, now, cal) => {
      const mo = monthOf(m[1]!);
      const d = Number(m[2]);
      if (!valid(2000, mo, d)) return null;
      return { kind: 'absolute', window: day(cal, lastYearOfDay(now, cal, mo, d), mo, d), inYear: (y) => day(cal, y, mo, d) };
    },
  },
  {
    re: new RegExp(`\\b(\\d{1,2})(?:st|nd|rd|th)?\\s+(?:of\\s+)?${MONTH_RE}\\b`, 'gi'),
    make: (m, now, cal) => {
      const mo = monthOf(m[2]!);
      const d = Number(m[1]);
      if (!valid(2000, mo, d)) return null;
      return { kind: 'absolute', window: day(cal, lastYearOfDay(now, cal, mo, d), mo, d), inYear: (y) => day(cal, y, mo, d) };
    },
  },
  {
    re: new RegExp(`(去年|今年|前年)?\\s*(?<![\\d〇零一二两三四五六七八九十])${CN_ORD}\\s*月\\s*${CN_ORD}\\s*[日号]`, 'g'),
    make: (m, now, cal) => {
      const [mo, d] = [cnNumber(m[2]!) - 1, cnNumber(m[3]!)];
      if (!valid(2000, mo, d)) return null;
      const y = m[1] ? cal.fields(now).y - (m[1] === '去年' ? 1 : m[1] === '前年' ? 2 : 0) : lastYearOfDay(now, cal, mo, d);
      return { kind: 'absolute', window: day(cal, y, mo, d) };
    },
  },
  {
    re: new RegExp(`\\b${MONTH_LEAD}\\s+${MONTH_RE}\\b(?!\\s*\\d)`, 'gi'),
    make: (m, now, cal) => {
      const lead = m[1]!.toLowerCase();
      // "may" and "march" lower case after "in"/"by" are too often the verb ("in may cases" is rare, "by march" rarer): the name must be capitalised unless "last"/"this" leads.
      if (!/^[A-Z]/.test(m[2]!) && lead !== 'last' && lead !== 'this') return null;
      const mo = monthOf(m[2]!);
      const y = lastYearOfMonth(now, cal, mo, lead === 'last');
      const window = monthWindow(cal, y, mo, lead);
      if (lead === 'since') return { kind: 'absolute', window: { from: window.from, to: now } };
      return { kind: 'absolute', window, inYear: lead === 'last' ? undefined : (year) => monthWindow(cal, year, mo, lead) };
    },
  },
  {
    re: new RegExp(`(去年|今年|前年)\\s*${CN_ORD}\\s*月份?`, 'g'),
    make: (m, now, cal) => {
      const mo = cnNumber(m[2]!) - 1;
      if (!valid(2000, mo)) return null;
      const y = cal.fields(now).y - (m[1] === '去年' ? 1 : m[1] === '前年' ? 2 : 0);
      return { kind: 'absolute', window: monthWindow(cal, y, mo) };
    },
  },
  {
    // 五月, 5月, 五月份 (not 5个月 "five months"): the last one up to now.
    re: new RegExp(`(?<![个\\d〇零一二两三四五六七八九十几])${CN_ORD}\\s*月份?(?![前后以之])`, 'g'),
    make: (m, now, cal) => {
      const mo = cnNumber(m[1]!) - 1;
      if (!Number.isInteger(mo) || !valid(2000, mo)) return null;
      return { kind: 'absolute', window: monthWindow(cal, lastYearOfMonth(now, cal, mo, false), mo) };
    },
  },
  // ---- seasons ----
  {
    re: /\b(?:(last|this|in|during|since|of)\s+)?(?:the\s+)?(spring|summer|autumn|fall|winter)(?:\s+(?:of\s+)?((?:19|20)\d{2}))?\b/gi,
    make: (m, now, cal) => {
      const lead = (m[1] ?? '').toLowerCase();
      const first = SEASONS[m[2]!.toLowerCase()]!;
      if (m[3]) return { kind: 'absolute', window: seasonWindow(cal, Number(m[3]), first) };
      if (!lead) return null; // "fall" the verb, "summer" the name
      return { kind: 'absolute', window: seasonWindow(cal, lastSeasonYear(now, cal, first, lead === 'last'), first) };
    },
  },
  {
    re: /(去年|今年|前年)的?(春|夏|秋|冬)天/g,
    make: (m, now, cal) => {
      const y = cal.fields(now).y - (m[1] === '去年' ? 1 : m[1] === '前年' ? 2 : 0);
      const first = SEASONS[m[2]!]!;
      return { kind: 'absolute', window: seasonWindow(cal, y, first) };
    },
  },
  // ---- years ----
  {
    re: new RegExp(`\\b${YEAR_LEAD}\\s+(?:the\\s+year\\s+)?((?:19|20)\\d{2})\\b(?!\\s*[-–:/.]\\d)`, 'gi'),
    make: (m, _now, cal) => {
      const y = Number(m[1]);
      return { kind: 'absolute', window: { from: cal.at(y, 0, 1), to: cal.at(y + 1, 0, 1) } };
    },
  },
  {
    re: /((?:19|20)\d{2}|[〇零一二三四五六七八九]{4})\s*年(?![前后以之])/g,
    make: (m, _now, cal) => {
      const y = cnNumber(m[1]!);
      return valid(y, 0) ? { kind: 'absolute', window: { from: cal.at(y, 0, 1), to: cal.at(y + 1, 0, 1) } } : null;
    },
  },
  // ---- relative: before a date the question names, or before now ----
  {
    re: /\bthe\s+day\s+before\s+yesterday\b/gi,
    make: () => ({ kind: 'relative', at: (a, cal) => ({ from: cal.dayStart(a) - 2 * DAY, to: cal.dayStart(a) - DAY }) }),
  },
  {
    re: new RegExp(`\\b${NUM_RE}\\s+${UNIT_RE}\\s+(ago|before|earlier)\\b`, 'gi'),
    make: (m) => {
      const n = numberOf(m[1]!);
      if (!Number.isFinite(n) || n <= 0) return null;
      return { kind: 'relative', at: ago(n, unitMs(m[2]!)), before: m[3]!.toLowerCase() === 'before' };
    },
  },
  {
    // the week before August 3: the week up to that day; the (last) weekend before it: that weekend
    re: /\b(?:the\s+|last\s+)?(day|week|weekend|month|year)\s+before\b/gi,
    make: (m) => {
      const u = m[1]!.toLowerCase();
      if (u === 'weekend') return { kind: 'relative', at: previousUnit(u), before: true };
      const span = unitMs(u);
      return { kind: 'relative', at: (a) => ({ from: a - DAY - span, to: a }), before: true };
    },
  },
  {
    re: new RegExp(`\\b(?:the\\s+)?${WEEKDAY_RE}\\s+before\\b`, 'gi'),
    make: (m) => ({ kind: 'relative', at: lastWeekday(WEEKDAYS.indexOf(m[1]!.toLowerCase())), before: true }),
  },
  { re: /\byesterday\b/gi, make: () => ({ kind: 'relative', at: (a, cal) => ({ from: cal.dayStart(a) - DAY, to: cal.dayStart(a) }) }) },
  {
    re: /\blast\s+night\b/gi,
    make: () => ({ kind: 'relative', at: (a, cal) => ({ from: cal.dayStart(a) - DAY / 2, to: Math.min(a, cal.dayStart(a) + DAY / 4) }) }),
  },
  {
    re: /\b(?:earlier\s+)?(today|this\s+morning|this\s+afternoon)\b/gi,
    make: () => ({ kind: 'relative', at: (a, cal) => ({ from: cal.dayStart(a), to: a }) }),
  },
  {
    // the past 3 days, the last few weeks, in the last two months, over the past couple of years
    re: new RegExp(`\\b(?:the\\s+)?(?:last|past|previous)\\s+${NUM_RE}\\s+${UNIT_RE}\\b`, 'gi'),
    make: (m) => {
      const n = numberOf(m[1]!);
      if (!Number.isFinite(n) || n <= 0) return null;
      const span = n * unitMs(m[2]!);
      return { kind: 'relative', at: (a) => ({ from: a - span, to: a }) };
    },
  },
  {
    // in the last month, over the past week, the past year: rolling
    re: /\b(?:(?:in|over|within|during)\s+the|the)\s+(?:last|past|previous)\s+(day|week|fortnight|month|year)\b/gi,
    make: (m) => {
      const span = unitMs(m[1]!);
      return { kind: 'relative', at: (a) => ({ from: a - span, to: a }) };
    },
  },
  {
    re: /\bpast\s+(week|fortnight|month|year)\b/gi,
    make: (m) => {
      const span = unitMs(m[1]!);
      return { kind: 'relative', at: (a) => ({ from: a - span, to: a }) };
    },
  },
  {
    re: new RegExp(`\\blast\\s+${WEEKDAY_RE}\\b`, 'gi'),
    make: (m) => ({ kind: 'relative', at: lastWeekday(WEEKDAYS.indexOf(m[1]!.toLowerCase())) }),
  },
  { re: /\b(?:last|previous)\s+(week|weekend|month|year)\b/gi, make: (m) => ({ kind: 'relative', at: previousUnit(m[1]!) }) },
  {
    re: /\b(?:earlier\s+)?this\s+(week|month|year)\b/gi,
    make: (m) => ({ kind: 'relative', at: currentUnit(m[1]!) }),
  },
  {
    re: /\bthis\s+weekend\b/gi,
    make: (_m, now, cal) => {
      const wd = cal.fields(now).wd;
      // On a weekday it is the coming weekend.
      if (wd !== 0 && wd !== 6) return { kind: 'future' };
      return { kind: 'relative', at: (a, c) => ({ from: c.dayStart(a) - (wd === 0 ? DAY : 0), to: a }) };
    },
  },
  // Before "recently": "most recently" asks for the newest, not for the last 30 days.
  { re: /\b(?:(?:most|more)\s+recent(?:ly)?|(?:the\s+)?latest)\b/gi, make: () => ({ kind: 'latest' }) },
  { re: /\b(?:recently|lately|the\s+other\s+day)\b/gi, make: () => ({ kind: 'relative', at: (a) => ({ from: a - RECENT_DAYS * DAY, to: a }) }) },
  {
    re: /\b(?:tomorrow|tonight|next\s+(?:week|weekend|month|year|time|monday|tuesday|wednesday|thursday|friday|saturday|sunday))\b/gi,
    make: () => ({ kind: 'future' }),
  },
  // ---- Chinese relative ----
  {
    re: new RegExp(`(?<![\\d〇零一二两三四五六七八九十])${CN_NUM}\\s*(天|日|周|个星期|星期|个礼拜|礼拜|个月|年)(?:以前|之前|前)`, 'g'),
    make: (m) => {
      const n = cnNumber(m[1]!);
      if (!Number.isFinite(n) || n <= 0) return null;
      const u = m[2]!;
      const unit = u === '天' || u === '日' ? DAY : u === '个月' ? 30.44 * DAY : u === '年' ? 365.25 * DAY : 7 * DAY;
      return { kind: 'relative', at: ago(n, unit) };
    },
  },
  {
    re: new RegExp(`(?:过去|最近|近|这)\\s*${CN_NUM}\\s*(天|日|周|个星期|个礼拜|个月|年)`, 'g'),
    make: (m) => {
      const n = cnNumber(m[1]!);
      if (!Number.isFinite(n) || n <= 0) return null;
      const u = m[2]!;
      const span = n * (u === '天' || u === '日' ? DAY : u === '个月' ? 30.44 * DAY : u === '年' ? 365.25 * DAY : 7 * DAY);
      return { kind: 'relative', at: (a) => ({ from: a - span, to: a }) };
    },
  },
  {
    re: /上个?(?:周|星期|礼拜)([一二三四五六日天])/g,
    make: (m) => {
      const wd = '日一二三四五六'.indexOf(m[1] === '天' ? '日' : m[1]!);
      // 上周五: Friday of last calendar week.
      return {
        kind: 'relative',
        at: (a, cal) => {
          const monday = cal.weekStart(a) - 7 * DAY;
          const from = monday + ((wd + 6) % 7) * DAY;
          return { from, to: from + DAY };
        },
      };
    },
  },
  { re: /上个?(?:周|星期|礼拜)末/g, make: () => ({ kind: 'relative', at: previousUnit('weekend') }) },
  { re: /上个?(?:周|星期|礼拜)/g, make: () => ({ kind: 'relative', at: previousUnit('week') }) },
  { re: /上个?月/g, make: () => ({ kind: 'relative', at: previousUnit('month') }) },
  { re: /去年/g, make: () => ({ kind: 'relative', at: previousUnit('year') }) },
  {
    re: /前年/g,
    make: () => ({
      kind: 'relative',
      at: (a, cal) => {
        const y = cal.fields(a).y - 2;
        return { from: cal.at(y, 0, 1), to: cal.at(y + 1, 0, 1) };
      },
    }),
  },
  { re: /前天/g, make: () => ({ kind: 'relative', at: (a, cal) => ({ from: cal.dayStart(a) - 2 * DAY, to: cal.dayStart(a) - DAY }) }) },
  { re: /昨天|昨日|昨晚/g, make: () => ({ kind: 'relative', at: (a, cal) => ({ from: cal.dayStart(a) - DAY, to: cal.dayStart(a) }) }) },
  { re: /今天|今日|今早|今天早上/g, make: () => ({ kind: 'relative', at: (a, cal) => ({ from: cal.dayStart(a), to: a }) }) },
  { re: /(?:这|本)个?(?:周|星期|礼拜)(?!末)/g, make: () => ({ kind: 'relative', at: currentUnit('week') }) },
  { re: /(?:这个|本)月/g, make: () => ({ kind: 'relative', at: currentUnit('month') }) },
  { re: /今年/g, make: () => ({ kind: 'relative', at: currentUnit('year') }) },
  { re: /前几天|前些天/g, make: () => ({ kind: 'relative', at: (a) => ({ from: a - 7 * DAY, to: a - DAY }) }) },
  { re: /最近一次|最新|最后一次/g, make: () => ({ kind: 'latest' }) },
  { re: /最近|近来|近期/g, make: () => ({ kind: 'relative', at: (a) => ({ from: a - RECENT_DAYS * DAY, to: a }) }) },
  { re: /明天|后天|今晚|下个?(?:周|星期|礼拜|月)|明年/g, make: () => ({ kind: 'future' }) },
];

/** The local offset of the machine at `now`, in minutes east of UTC. */
export function localOffsetMinutes(now: number): number {
  return -new Date(now).getTimezoneOffset();
}

/**
 * Reads the time `text` names. `now`: when it was asked (epoch ms); `offsetMinutes`: the calendar's
 * offset from UTC (default: this machine's at `now`). Never throws.
 */
export function readTimeWindow(text: string, now: number, offsetMinutes = localOffsetMinutes(now)): TimeReading {
  if (typeof text !== 'string' || !text || !Number.isFinite(now)) return { window: null, spans: [], named: false, latest: false };
  const cal = new Calendar(offsetMinutes * 60_000);
  const pieces: Piece[] = [];
  const taken = (s: number, e: number) => pieces.some((p) => s < p.end && e > p.start);
  for (const rule of RULES) {
    rule.re.lastIndex = 0;
    for (let m = rule.re.exec(text); m; m = rule.re.exec(text)) {
      const start = m.index;
      const end = start + m[0].length;
      if (m[0].length === 0) {
        rule.re.lastIndex++;
        continue;
      }
      if (taken(start, end)) continue;
      const made = rule.make(m, now, cal);
      if (made) pieces.push({ ...made, start, end });
    }
  }
  pieces.sort((a, b) => a.start - b.start);
  const spans = pieces.filter((p) => p.kind !== 'latest').map((p) => [p.start, p.end] as [number, number]);
  const latest = pieces.some((p) => p.kind === 'latest');
  const named = pieces.filter((p): p is Piece & { kind: 'absolute' } => p.kind === 'absolute');
  // "between August 11 and August 15 2023": a date without its year takes the year named beside it.
  const years = named.filter((p) => !p.inYear).map((p) => cal.fields(p.window.from).y);
  const absolutes = named.map((p) => (p.inYear && years.length ? p.inYear(years[years.length - 1]!) : p.window));
  const relatives = pieces.filter((p): p is Piece & { kind: 'relative' } => p.kind === 'relative');
  const windows: TimeWindow[] = [...absolutes];
  // A relative time is read from the date the question names (the latest, if several), else from now.
  const anchor = absolutes.length ? Math.max(...absolutes.map((w) => w.to)) : now;
  for (const r of relatives) {
    const w = r.at(anchor, cal);
    if (w && w.to > w.from) windows.push(w);
  }
  // "the week before" with no date named: before what is not known.
  if (!absolutes.length && relatives.length && relatives.every((r) => r.before)) return { window: null, spans, named: false, latest };
  if (!windows.length) return { window: null, spans, named: false, latest };
  const window = { from: Math.min(...windows.map((w) => w.from)), to: Math.max(...windows.map((w) => w.to)) };
  return { window, spans, named: relatives.length === 0, latest };
}

/** The text with the time expressions blanked (so their words are not matched as words). */
export function withoutSpans(text: string, spans: readonly [number, number][]): string {
  if (!spans.length) return text;
  let out = '';
  let at = 0;
  for (const [s, e] of spans) {
    out += text.slice(at, s) + ' ';
    at = e;
  }
  return out + text.slice(at);
}
