// Words for the Graph view: relations in the UI language and calendar days.
import { useCallback } from 'react';
import { useTranslation } from 'react-i18next';
import { currentLocale } from '../../i18n/index.js';
import { humanRelation } from '../../stores/graph.js';

/** A relation in the UI language: known ones translated, others as written ("lives_in" → "lives in"). */
export function useRelationLabel(): (relation: string) => string {
  const { t } = useTranslation();
  // t is a new function whenever the language changes, so the labels follow it.
  return useCallback((relation: string) => t(`graph.relations.${relation}`, { defaultValue: humanRelation(relation) }), [t]);
}

/** A calendar day (YYYY-MM-DD) in words, as the day it is wherever the person is. */
export function useDayFormat(): (day: string) => string {
  const locale = currentLocale();
  return useCallback(
    (day: string) =>
      new Intl.DateTimeFormat(locale, { timeZone: 'UTC', year: 'numeric', month: 'short', day: 'numeric' }).format(new Date(`${day}T00:00:00.000Z`)),
    [locale],
  );
}
