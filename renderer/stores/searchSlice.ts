// The search box of the Diary, the Graph and Memories: what is typed, and the hits for it. A search
// goes out once typing pauses, so a word typed letter by letter asks once; every search is numbered,
// so an answer that comes back after a newer question was asked is dropped, never shown over it.
import { idle, type Loadable } from './loadable.js';

export interface SearchResults<Hit> extends Loadable {
  /** The query these hits answer (the box may already say something else). */
  query: string;
  hits: Hit[];
}

export interface SearchSlice<Hit> {
  query: string;
  search: SearchResults<Hit>;
  /** Typing: searches once typing pauses; an emptied box clears the hits at once. */
  setQuery(query: string): void;
  /** Searches for what the box says now. */
  runSearch(): Promise<void>;
}

export interface SearchOptions<S, Hit> {
  /** How long typing must pause before a search goes out. */
  debounceMs: number;
  search(query: string): Promise<Hit[]>;
  /** After the hits are shown, while they are still the newest: an error here shows as the search's own. */
  afterHits?(hits: Hit[], get: () => S): Promise<unknown>;
  /** The box was emptied. */
  onCleared?(get: () => S): void;
  /**
   * A search asked for outright also drops the one waiting for typing to pause. The Graph's Enter
   * asks before the pause is over, and the waiting search would only ask the same again.
   */
  runDropsPending?: boolean;
}

export function emptySearch<Hit>(): SearchResults<Hit> {
  return { ...idle(), query: '', hits: [] };
}

/**
 * One store's search: its actions for the store (`actions(set, get)`), and `cancel` for the store's
 * reset. The store keeps `query` and `search` in its own initial data (`emptySearch()`).
 */
export function createSearchSlice<S extends SearchSlice<Hit>, Hit>(options: SearchOptions<S, Hit>) {
  let seq = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;

  return {
    cancel(): void {
      clearTimeout(timer);
    },

    actions(set: (partial: Partial<SearchSlice<Hit>>) => void, get: () => S): Pick<SearchSlice<Hit>, 'setQuery' | 'runSearch'> {
      return {
        setQuery(query) {
          set({ query });
          clearTimeout(timer);
          if (!query.trim()) {
            seq++;
            set({ search: emptySearch() });
            options.onCleared?.(get);
            return;
          }
          set({ search: { ...get().search, loading: true } });
          timer = setTimeout(() => void get().runSearch(), options.debounceMs);
        },

        async runSearch() {
          if (options.runDropsPending) clearTimeout(timer);
          const query = get().query.trim();
          if (!query) return;
          const mine = ++seq;
          set({ search: { ...get().search, loading: true } });
          try {
            const hits = await options.search(query);
            if (mine !== seq) return;
            set({ search: { query, hits, loaded: true, loading: false, error: null } });
            await options.afterHits?.(hits, get);
          } catch (error) {
            if (mine === seq) set({ search: { query, hits: [], loaded: true, loading: false, error } });
          }
        },
      };
    },
  };
}
