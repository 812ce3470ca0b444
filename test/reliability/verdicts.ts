// What counts as a failure in each part's report (the "Done means" of the reliability issue).

export function verdicts(part: string, r: Record<string, any>): string[] {
  const f: string[] = [];
  const zero = (key: string) => {
    if (r[key] !== 0) f.push(`${key} = ${r[key]} (must be 0)`);
  };
  switch (part) {
    case 'kill':
      if (r.cycles < r.cyclesPlanned) f.push(`only ${r.cycles} of ${r.cyclesPlanned} cycles ran`);
      for (const key of ['lost', 'failedRestarts', 'streamingAfterRestart', 'replyNotPrefix', 'sleepRunsStuck']) zero(key);
      break;
    case 'fuzz':
      for (const key of ['serverErrors', 'noAnswer', 'refusedButChanged']) zero(key);
      break;
    case 'streams':
      zero('appDead');
      if (r.chatPassed !== r.chatCases) f.push(`chat: ${r.chatCases - r.chatPassed} of ${r.chatCases} cases ended wrong`);
      if (r.backgroundPassed !== r.backgroundCases) f.push(`sleep: ${r.backgroundCases - r.backgroundPassed} of ${r.backgroundCases} cases ended wrong`);
      break;
    case 'secrets':
      if (!r.corpusFound) f.push('TODO: the secret corpus (electron/memory/testing/secret-corpus.ts) is missing');
      for (const key of ['leaked', 'controlsRefused', 'serverErrors']) zero(key);
      break;
    case 'locks':
      if (r.passed !== r.cases) f.push(`${r.cases - r.passed} of ${r.cases} lock cases failed`);
      break;
  }
  return f;
}
