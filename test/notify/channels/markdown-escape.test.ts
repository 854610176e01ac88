/**
 * API text escaped for Teams' Adaptive Card markdown and Discord's markdown: no emphasis, link,
 * code, mention, list, heading or quote can be formed from it; a hidden character is written out;
 * a line break folds; the cut counts the escaped length and never splits an escape.
 */
import { describe, expect, it } from 'vitest';
import { escapeDiscordMarkdown, escapeTeamsMarkdown } from '../../../src/notify/channels/escape.js';

describe('escapeTeamsMarkdown', () => {
  it.each([
    ['*bold* _it_ ~s~', '\\*bold\\* \\_it\\_ \\~s\\~'],
    ['[click](https://evil.example)', '\\[click\\]\\(https://evil.example\\)'],
    ['<at>everyone</at> `x`', '\\<at\\>everyone\\</at\\> \\`x\\`'],
    ['1. first', '1\\. first'],
    ['- item', '\\- item'],
    ['# heading', '\\# heading'],
    ['> quote', '\\> quote'],
    ['a-b c#d 2.5', 'a-b c#d 2.5'],
    ['two\nlines\r\nhere', 'two lines here'],
    ['shop\u202Egnp', 'shop\\u{202e}gnp'],
  ])('%j → %j', (input, expected) => {
    expect(escapeTeamsMarkdown(input)).toBe(expected);
  });
});

describe('escapeDiscordMarkdown', () => {
  it.each([
    ['@everyone and @here', '\\@everyone and \\@here'],
    ['<@123456789012345678> <@&1> <#2>', '\\<\\@123456789012345678> \\<\\@&1> \\<#2>'],
    ['||spoiler|| **b**', '\\|\\|spoiler\\|\\| \\*\\*b\\*\\*'],
    ['[x](https://evil.example)', '\\[x\\]\\(https://evil.example\\)'],
    ['> quote', '\\> quote'],
    ['# big', '\\# big'],
    ['1. one', '1\\. one'],
    ['a > b', 'a > b'],
  ])('%j → %j', (input, expected) => {
    expect(escapeDiscordMarkdown(input)).toBe(expected);
  });

  it('cuts to the escaped length, never inside an escape', () => {
    const cut = escapeDiscordMarkdown('*'.repeat(100), 11);
    expect(cut.length).toBeLessThanOrEqual(11);
    expect(cut).toBe('\\*\\*\\*\\*\\*…');
  });
});
