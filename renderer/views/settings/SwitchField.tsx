/** An on/off setting: the switch, its name and a line of help. */
export function SwitchField({
  id,
  testId,
  checked,
  onChange,
  label,
  help,
  className,
}: {
  id: string;
  testId: string;
  checked: boolean;
  onChange: (checked: boolean) => void;
  label: string;
  help: string;
  /** Added to the row's own classes. */
  className?: string;
}) {
  return (
    <div className={className ? `field switch-field ${className}` : 'field switch-field'}>
      <input
        id={id}
        type="checkbox"
        role="switch"
        className="switch"
        data-testid={testId}
        checked={checked}
        aria-describedby={`${id}-help`}
        onChange={(e) => onChange(e.target.checked)}
      />
      <div>
        <label htmlFor={id}>{label}</label>
        <p className="help" id={`${id}-help`}>
          {help}
        </p>
      </div>
    </div>
  );
}
