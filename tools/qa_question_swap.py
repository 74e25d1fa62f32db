#!/usr/bin/env python3
"""Does a question-answering model read the question? Baselines and a question-swap check.

    python3 tools/qa_question_swap.py MODEL_DIR --predict bazel-bin/recipes/xlmr_predict
        [--test_file recipes/data/langid_qa/test.jsonl] [--train_file .../train.jsonl]

For a SQuAD v2-style file in which every context is asked about several times (as in the
embedded example recipes/data/langid_qa, where each sentence gets one question per language it
contains and one it does not), it prints, scored as evaluate's "squad_v2" metric scores them:

  1. two constant baselines that never read the question:
     - "no answer" to every question;
     - the most frequent answer position: every question of a context gets the same answer, the
       answer found most often in that position among the training file's answerable questions
       (here: the n-th labelled part of the context, n the most frequent one);
  2. the model's own predictions (xlmr_predict --task=question_answering on the file);
  3. the same contexts with the questions swapped between examples: each question is replaced
     by the question of the example at the same place in the next context (the last context
     takes the first one's); the model's answers to the swapped file are scored
     - against the original answers (a model that reads the question loses most of its F1), and
     - against the swapped questions' own answers, known because every question of a context
       is in the file (a model that reads the question keeps its F1).

xlmr_predict runs with the settings the model was trained with (its prediction_args.json).
Exits 0 after printing the table, 2 on a bad argument or file (one line). A developer tool: it
reads and scores files with tools/hf_qa_check.py's functions (numpy, no torch) and answers with
the product's own xlmr_predict.
"""

import collections
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from hf_qa_check import EMBEDDED, OneLineParser, read_examples, squad_v2, usage_error  # noqa: E402


def score(rows, answers):
    """(exact, F1) of `answers` (one text per row, "" = no answer) as evaluate's squad_v2."""
    figures = squad_v2(rows, {row["id"]: answer for row, answer in zip(rows, answers)})
    return figures["exact"], figures["f1"]


def contexts_in_order(rows):
    """{context: [row]} in file order."""
    by_context = collections.OrderedDict()
    for row in rows:
        by_context.setdefault(row["context"], []).append(row)
    return by_context


def answers_in_context_order(rows):
    """{context: [answer text]}: the distinct answers asked for in each context, by position."""
    answers = {}
    for context, questions in contexts_in_order(rows).items():
        by_start = {q["answers"]["answer_start"][0]: q["answers"]["text"][0]
                    for q in questions if q["answers"]["text"]}
        answers[context] = [by_start[start] for start in sorted(by_start)]
    return answers


def swapped_questions(rows):
    """The rows with each question taken from the same place in the next context, and the gold
    answers of those questions in this context (found among the context's own questions)."""
    groups = list(contexts_in_order(rows).values())
    swapped, swapped_golds = [], []
    for index, questions in enumerate(groups):
        donor = groups[(index + 1) % len(groups)]
        answers_here = {q["question"]: q["answers"]["text"] for q in questions}
        for place, row in enumerate(questions):
            question = donor[place % len(donor)]["question"]
            swapped.append(dict(row, question=question))
            swapped_golds.append(answers_here.get(question, []))
    return swapped, swapped_golds


def write_rows(path, rows):
    with open(path, "w", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")


def predict(binary, model_dir, path, rows, out):
    """xlmr_predict's answers to the questions of `path` (which holds `rows`), in row order."""
    command = [binary, f"--model_dir={model_dir}", f"--input_file={path}",
               f"--output_dir={out}"]
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        usage_error(f"{' '.join(command)} exited {result.returncode}: {result.stderr.strip()}")
    try:
        with open(os.path.join(out, "predictions.json"), encoding="utf-8") as f:
            answers = json.load(f)
    except (OSError, ValueError) as error:
        usage_error(f"{out}/predictions.json: {error}")
    return [answers[row["id"]] for row in rows]


def main():
    parser = OneLineParser(description=__doc__.split("\n")[0])
    parser.add_argument("model_dir")
    parser.add_argument("--predict", required=True, help="the xlmr_predict binary")
    parser.add_argument("--test_file", default=os.path.join(EMBEDDED, "test.jsonl"))
    parser.add_argument("--train_file", default=os.path.join(EMBEDDED, "train.jsonl"))
    args = parser.parse_args()
    test, train = read_examples(args.test_file), read_examples(args.train_file)
    train_answers, test_answers = answers_in_context_order(train), answers_in_context_order(test)

    positions = collections.Counter(train_answers[r["context"]].index(r["answers"]["text"][0])
                                    for r in train if r["answers"]["text"])
    usual, _ = positions.most_common(1)[0]
    table = [("no answer to every question", score(test, [""] * len(test))),
             (f"always the answer in position {usual + 1} (the training file's most frequent)",
              score(test, [(test_answers[r["context"]] + [""] * (usual + 1))[usual] for r in test]))]
    with tempfile.TemporaryDirectory() as workdir:
        answers = predict(args.predict, args.model_dir, args.test_file, test, os.path.join(workdir, "test"))
        table.append(("the model", score(test, answers)))
        swapped, swapped_golds = swapped_questions(test)
        swapped_path = os.path.join(workdir, "swapped.jsonl")
        write_rows(swapped_path, swapped)
        answers = predict(args.predict, args.model_dir, swapped_path, swapped,
                          os.path.join(workdir, "swapped"))
    table.append(("the model, questions swapped, against the original answers", score(test, answers)))
    swapped_rows = [dict(row, answers={"text": gold, "answer_start": []})
                    for row, gold in zip(swapped, swapped_golds)]
    table.append(("the model, questions swapped, against the swapped questions' answers",
                  score(swapped_rows, answers)))
    changed = sum(1 for row, gold in zip(test, swapped_golds) if row["answers"]["text"] != gold)
    print(f"{args.test_file}: {len(test)} questions on {len(contexts_in_order(test))} contexts; "
          f"swapping changes the gold answer of {changed}")
    print("| answers | exact | F1 |\n|---|---|---|")
    for name, (exact, f1) in table:
        print(f"| {name} | {exact:.1f} | {f1:.1f} |")


if __name__ == "__main__":
    main()
