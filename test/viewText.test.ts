import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { autop, jsonLdText, renderTitle, texturizeTitle } from '../src/domain/html.js';
import { details } from '../src/domain/postView.js';

// Texts made of the characters the renderers treat specially, and of others, so that both paths are taken often.
const text = fc.string({ unit: fc.constantFrom('a', 'B', ' ', '\n', '\r', '\t', '<', '>', '&', '"', "'", '.', '-', '#', ';', 'p', 'é', '1') });

describe('the fast paths of the view texts give what the full rendering gives', () => {
  it('renderTitle: a title without markup, entities, quotes, dots or dashes is only trimmed', () => {
    fc.assert(fc.property(text, (raw) => { expect(renderTitle(raw)).toBe(texturizeTitle(raw.trim())); }), { numRuns: 2000 });
    expect(renderTitle('  Spring Reading 12 ')).toBe('Spring Reading 12');
    expect(renderTitle('Rock & Roll -- "Live"...')).toBe('Rock &#038; Roll &#8211; &#8220;Live&#8221;&#8230;');
  });

  it('jsonLdText: one pass escapes as the replacements one character at a time do, and a text with nothing to escape is returned as it is', () => {
    const escaped = (t: string) => t.replace(/&(?!(?:[a-zA-Z][a-zA-Z0-9]*|#\d+|#x[0-9a-fA-F]+);)/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/\n/g, '\\n');
    fc.assert(fc.property(text, (raw) => { expect(jsonLdText(raw)).toBe(escaped(raw)); }), { numRuns: 2000 });
  });

  it('autop: one line of text is one paragraph', () => {
    const paragraphs = (raw: string) => {
      const t = raw.replace(/\r\n?/g, '\n').trim();
      if (t === '') return '';
      if (/<(?:p|div|h[1-6]|ul|ol|li|table|blockquote|pre|figure|section|article|dl|hr|form|address|fieldset)[\s>/]/i.test(t)) return t + '\n';
      return t.split(/\n\s*\n/).map((para) => `<p>${para.trim().replace(/\n/g, '<br />\n')}</p>`).join('\n') + '\n';
    };
    fc.assert(fc.property(text, (raw) => { expect(autop(raw)).toBe(paragraphs(raw)); }), { numRuns: 2000 });
    expect(autop(' food and film ')).toBe('<p>food and film</p>\n');
  });

  it('date details: stored times are cut at fixed places, other shapes split as before', () => {
    expect(details('2026-11-28 05:02:19')).toEqual({ year: '2026', month: '11', day: '28', hour: '05', minutes: '02', seconds: '19' });
    expect(details('12026-01-02 03:04:05')).toEqual({ year: '12026', month: '01', day: '02', hour: '03', minutes: '04', seconds: '05' });
    expect(details('-0044-03-15 12:00:00').hour).toBe('12');
  });
});
