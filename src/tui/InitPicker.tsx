import { Box, Text, useApp, useInput, type Key } from 'ink';
import { useEffect, useReducer } from 'react';
import { KINDS, TEMPLATES, type TemplateKind } from '../cli/init-templates.js';

export interface InitChoice {
  name: string;
  template: string;
}

export interface InitPickerProps {
  /** Skips the name step (the folder was given on the command line). */
  name?: string;
  defaultName: string;
  /** Why a name cannot be used (not a valid name, a folder already there), or undefined. */
  checkName: (name: string) => string | undefined;
  onDone: (choice: InitChoice | undefined) => void;
}

type Step = 'name' | 'kind' | 'variant' | 'done' | 'cancelled';

interface PickerState {
  step: Step;
  name: string;
  error?: string;
  kindIndex: number;
  variantIndex: number;
  template?: string;
}

type Action = { type: 'key'; input: string; key: Key };

const variantsOf = (kindIndex: number) => TEMPLATES.filter((t) => t.kind === KINDS[kindIndex]!.kind);

/**
 * One key at a time through a reducer: keys sent faster than a frame renders (a paste, a script)
 * each see the state the previous one left, never a stale copy.
 */
function reduce(s: PickerState, { input, key }: Action, defaultName: string, checkName: (n: string) => string | undefined): PickerState {
  if (s.step === 'done' || s.step === 'cancelled') return s;
  if (key.escape) return { ...s, step: 'cancelled' };
  if (s.step === 'name') {
    if (key.backspace || key.delete) return { ...s, name: s.name.slice(0, -1) };
    if (key.ctrl || key.meta || key.upArrow || key.downArrow || key.leftArrow || key.rightArrow || key.tab) return s;
    // Pasted text arrives as one chunk, Enter included.
    const typed = s.name + input.split(/[\r\n]/)[0]!.replace(/[\x00-\x1f\x7f]/g, '');
    if (!key.return && !/[\r\n]/.test(input)) return { ...s, name: typed };
    const chosen = typed || defaultName;
    const error = checkName(chosen);
    return error ? { ...s, name: typed, error } : { ...s, name: chosen, error: undefined, step: 'kind' };
  }
  const move = key.upArrow || input === 'k' ? -1 : key.downArrow || input === 'j' ? 1 : 0;
  if (s.step === 'kind') {
    if (move) return { ...s, kindIndex: (s.kindIndex + move + KINDS.length) % KINDS.length };
    if (!key.return) return s;
    const variants = variantsOf(s.kindIndex);
    // One template of this kind: nothing left to ask.
    return variants.length === 1 ? { ...s, step: 'done', template: variants[0]!.name } : { ...s, step: 'variant', variantIndex: 0 };
  }
  const variants = variantsOf(s.kindIndex);
  if (move) return { ...s, variantIndex: (s.variantIndex + move + variants.length) % variants.length };
  return key.return ? { ...s, step: 'done', template: variants[s.variantIndex]!.name } : s;
}

/**
 * `platform init` on a terminal: the folder's name, then the kind, then the runtime or framework.
 * Arrows or j/k move, Enter chooses, Esc (or Ctrl-C) leaves without creating anything.
 */
export function InitPicker({ name: given, defaultName, checkName, onDone }: InitPickerProps) {
  const { exit } = useApp();
  const [state, dispatch] = useReducer((s: PickerState, a: Action) => reduce(s, a, defaultName, checkName), {
    step: given ? 'kind' : 'name',
    name: given ?? '',
    kindIndex: 0,
    variantIndex: 0,
  });
  useInput((input, key) => dispatch({ type: 'key', input, key }));
  useEffect(() => {
    if (state.step !== 'done' && state.step !== 'cancelled') return;
    onDone(state.template ? { name: state.name, template: state.template } : undefined);
    exit();
  }, [state.step]);

  const { step, name, error, kindIndex, variantIndex } = state;
  const kind: TemplateKind = KINDS[kindIndex]!.kind;
  const variants = variantsOf(kindIndex);
  return (
    <Box flexDirection="column">
      {step === 'name' ? (
        <Box flexDirection="column">
          <Text>
            <Text bold>Name</Text> (the folder, and the name it deploys as):{' '}
            {name ? <Text>{name}</Text> : <Text dimColor>{defaultName}</Text>}
            <Text inverse> </Text>
          </Text>
          {error ? <Text color="red">{error}</Text> : null}
        </Box>
      ) : (
        <Text>
          <Text bold>Name</Text> {name}
        </Text>
      )}
      {step === 'kind' ? <Choice title="Kind" items={KINDS.map((k) => ({ label: k.label, hint: k.hint }))} index={kindIndex} /> : null}
      {step === 'variant' ? (
        <>
          <Text>
            <Text bold>Kind</Text> {KINDS[kindIndex]!.label}
          </Text>
          <Choice title={kind === 'agent' ? 'Framework' : 'Runtime'} items={variants.map((v) => ({ label: v.variant, hint: v.name }))} index={variantIndex} />
        </>
      ) : null}
      {step === 'done' ? (
        <Text>
          <Text bold>Template</Text> {state.template}
        </Text>
      ) : null}
      {step === 'done' || step === 'cancelled' ? null : <Text dimColor>{step === 'name' ? 'type a name, Enter to go on, Esc to cancel' : '↑/↓ or j/k to move, Enter to choose, Esc to cancel'}</Text>}
    </Box>
  );
}

function Choice({ title, items, index }: { title: string; items: { label: string; hint: string }[]; index: number }) {
  return (
    <Box flexDirection="column">
      <Text bold>{title}</Text>
      {items.map((item, i) => (
        <Text key={item.label} color={i === index ? 'cyan' : undefined}>
          {i === index ? '❯ ' : '  '}
          {item.label} <Text dimColor>{item.hint}</Text>
        </Text>
      ))}
    </Box>
  );
}
