// Migrations are plain .sql files imported as text (esbuild's text loader; a small plugin in vitest).
declare module '*.sql' {
  const sql: string;
  export default sql;
}
