/** A column: its heading, right-aligned for numbers, or read by screen readers only (the actions column). */
export type Column = string | { label: string; numeric?: boolean; hidden?: boolean };

/** The header row of a data table, every heading a column header (`scope="col"`). */
export function TableHead({ columns }: { columns: Column[] }) {
  return (
    <thead>
      <tr>
        {columns.map((c) => {
          const { label, numeric = false, hidden = false } = typeof c === 'string' ? { label: c } : c;
          return (
            <th key={label} scope="col" class={numeric ? 'num' : undefined}>
              {hidden ? <span class="visually-hidden">{label}</span> : label}
            </th>
          );
        })}
      </tr>
    </thead>
  );
}
