// WCAG contrast ratios of what the Handoff view draws, from the styles Chromium computed in the
// real webview: each colour composed with its own alpha and its ancestors' opacity over the view's
// background (the sidebar's, which shows through the transparent webview).
import type { Frame } from 'playwright-core';

type Rgba = [number, number, number, number];

function parse(c: string): Rgba {
  const m = /rgba?\(([^)]+)\)/.exec(c);
  if (!m) throw new Error(`not an rgb() colour: ${c}`);
  const [r, g, b, a] = m[1]
    .split(/[\s,/]+/)
    .filter(Boolean)
    .map(Number);
  return [r, g, b, a ?? 1];
}

function over(fg: Rgba, bg: Rgba, opacity = 1): Rgba {
  const a = fg[3] * opacity;
  return [0, 1, 2].map((i) => fg[i] * a + bg[i] * (1 - a)).concat(1) as Rgba;
}

function luminance(c: Rgba): number {
  const lin = (v: number) => ((v /= 255) <= 0.04045 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4);
  return 0.2126 * lin(c[0]) + 0.7152 * lin(c[1]) + 0.0722 * lin(c[2]);
}

export function ratio(a: Rgba, b: Rgba): number {
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x);
  return Math.round(((hi + 0.05) / (lo + 0.05)) * 100) / 100;
}

export interface Contrast {
  what: string;
  ratio: number;
  fg: string;
  bg: string;
}

/**
 * For each named selector (its first match), the contrast of one computed colour property against
 * the view's background, or against another element's colour (`against`).
 */
export async function contrasts(
  frame: Frame,
  checks: { what: string; selector: string; prop?: string; against?: { selector: string; prop: string } }[],
): Promise<Contrast[]> {
  const seen = await frame.evaluate((list) => {
    const probe = document.createElement('div');
    probe.style.background = 'var(--vscode-sideBar-background, var(--vscode-editor-background))';
    document.body.append(probe);
    const bg = getComputedStyle(probe).backgroundColor;
    probe.remove();
    const read = (selector: string, prop: string) => {
      const el = document.querySelector(selector);
      if (!el) throw new Error(`nothing matches ${selector}`);
      let opacity = 1;
      for (let e: Element | null = el; e; e = e.parentElement) opacity *= Number(getComputedStyle(e).opacity);
      return { color: getComputedStyle(el).getPropertyValue(prop), opacity };
    };
    return {
      bg,
      rows: list.map((c) => ({
        fg: read(c.selector, c.prop ?? 'color'),
        against: c.against && read(c.against.selector, c.against.prop),
      })),
    };
  }, checks);
  const bg = parse(seen.bg);
  return checks.map((c, i) => {
    const { fg, against } = seen.rows[i];
    const back = against ? over(parse(against.color), bg, against.opacity) : bg;
    return {
      what: c.what,
      ratio: ratio(over(parse(fg.color), back, fg.opacity), back),
      fg: fg.color,
      bg: against ? against.color : seen.bg,
    };
  });
}
