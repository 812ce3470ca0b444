// The empty Diary and the empty Dreams: both are written by the nights, so both say the same thing
// when there is nothing yet — that the last night failed (and why, with the way to Sleep), or when
// the next night comes, with "Sleep now".
import { Illustration } from '../../components/Illustration.js';
import { SleepNowButton, useNextSleepWords } from '../../components/SleepNow.js';
import { useApp } from '../../stores/app.js';
import { useSleep } from '../../stores/sleep.js';
import { LastNightFailed } from './FailedNight.js';

export function NightsEmpty({
  view,
  words,
  buttonClassName,
}: {
  view: 'diary' | 'dreams';
  /** The heading and the line under it; `when` is the next night in words, `auto` whether nights come on their own. */
  words: (auto: boolean, when: string) => { title: string; body: string };
  buttonClassName?: string;
}) {
  const when = useNextSleepWords();
  const auto = useApp((s) => s.settings?.sleep?.auto ?? true);
  const failed = useSleep((s) => s.status.data?.lastRun?.status === 'failed');
  if (failed) {
    return (
      <div className="diary-empty" data-testid={`${view}-empty`} data-night="failed">
        <Illustration view={view} />
        <LastNightFailed testId={`${view}-night-failed`} />
      </div>
    );
  }
  const { title, body } = words(auto, when);
  return (
    <div className="diary-empty" data-testid={`${view}-empty`}>
      <Illustration view={view} />
      <h2 className="diary-empty-title">{title}</h2>
      <p className="diary-empty-body">{body}</p>
      <SleepNowButton testId={`${view}-sleep-now`} className={buttonClassName} goToSleep />
    </div>
  );
}
