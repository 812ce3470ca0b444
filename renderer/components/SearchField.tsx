import { Icon } from './Icon.js';

/** A search box over a store's search slice: a spinner while it searches, Escape or × to clear. */
export function SearchField({
  query,
  setQuery,
  searching,
  className,
  testId,
  label,
  placeholder,
  searchingLabel,
  clearLabel,
}: {
  query: string;
  setQuery: (query: string) => void;
  searching: boolean;
  className: string;
  testId: string;
  label: string;
  placeholder: string;
  searchingLabel: string;
  clearLabel: string;
}) {
  return (
    <div className={className} role="search">
      <Icon name="search" size={17} className="mem-search-icon" />
      <input
        type="search"
        className="input"
        data-testid={testId}
        aria-label={label}
        placeholder={placeholder}
        value={query}
        maxLength={2000}
        onChange={(e) => setQuery(e.target.value)}
        onKeyDown={(e) => {
          if (e.key === 'Escape' && query) {
            e.preventDefault();
            setQuery('');
          }
        }}
      />
      {searching && query.trim() ? <span className="spinner mem-search-spin" role="status" aria-label={searchingLabel} /> : null}
      {query ? (
        <button type="button" className="icon-button small mem-search-clear" aria-label={clearLabel} onClick={() => setQuery('')}>
          <Icon name="close" size={15} />
        </button>
      ) : null}
    </div>
  );
}
