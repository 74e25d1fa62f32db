// ReadTaggedSentences for CoNLL (.conll/.txt) and JSON lines. Messages are compared exactly
// (or by their distinguishing part): they are the user interface.
#include "framework/data/tagged_sentence_reader.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/framework/data/temp_files.h"

namespace xlmr::data {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::WriteTempFile;

absl::StatusOr<std::vector<TaggedSentence>> Read(const std::string& name,
                                                 const std::string& content, bool require_tags,
                                                 const WordTagColumns& columns = {}) {
  return ReadTaggedSentences(WriteTempFile(name, content), columns, require_tags);
}

// The error message of reading `content` as `name`; fails the test when reading succeeds.
std::string ErrorOf(const std::string& name, const std::string& content, bool require_tags = true,
                    const WordTagColumns& columns = {}) {
  absl::StatusOr<std::vector<TaggedSentence>> sentences =
      Read(name, content, require_tags, columns);
  EXPECT_FALSE(sentences.ok()) << "read " << name << " without error";
  if (sentences.ok()) return "";
  // Messages start with the path as given; strip the temporary directory.
  const std::string message(sentences.status().message());
  return message.substr(message.find(name));
}

TEST(ConllReaderTest, SplitsSentencesOnBlankAndDocstartLinesAndTakesFirstAndLastField) {
  // CoNLL-2003 layout: word, POS, chunk, NER; spaces and tabs mixed; CRLF; a BOM.
  const std::string content =
      "\xEF\xBB\xBF-DOCSTART- -X- -X- O\r\n"
      "\r\n"
      "EU NNP B-NP B-ORG\r\n"
      "rejects\tVBZ  B-VP\tO\r\n"
      "  \t \n"
      "Peter NNP B-NP B-PER\n"
      "-DOCSTART- -X- O\n"
      "Blackburn NNP B-NP B-PER\n";
  absl::StatusOr<std::vector<TaggedSentence>> sentences = Read("a.conll", content, true);
  ASSERT_TRUE(sentences.ok()) << sentences.status();
  ASSERT_EQ(sentences->size(), 3u);
  EXPECT_THAT((*sentences)[0].words, ElementsAre("EU", "rejects"));
  EXPECT_THAT((*sentences)[0].tags, ElementsAre("B-ORG", "O"));
  EXPECT_EQ((*sentences)[0].line, 3);
  EXPECT_THAT((*sentences)[1].words, ElementsAre("Peter"));
  EXPECT_EQ((*sentences)[1].line, 6);
  EXPECT_THAT((*sentences)[2].words, ElementsAre("Blackburn"));
  EXPECT_THAT((*sentences)[2].tags, ElementsAre("B-PER"));
  EXPECT_EQ((*sentences)[2].line, 8);
}

TEST(ConllReaderTest, TxtIsConllAndExtensionIsCaseInsensitive) {
  for (const char* name : {"b.txt", "b.CoNLL"}) {
    absl::StatusOr<std::vector<TaggedSentence>> sentences = Read(name, "a O\nb B-X\n", true);
    ASSERT_TRUE(sentences.ok()) << sentences.status();
    EXPECT_THAT((*sentences)[0].tags, ElementsAre("O", "B-X"));
  }
}

TEST(ConllReaderTest, WordWithoutTagIsAnErrorWhenTagsAreRequired) {
  EXPECT_EQ(ErrorOf("c.conll", "a O\n\nb\n"),
            "c.conll:3: expected a word and its tag separated by tabs or spaces, found 1 field");
}

TEST(ConllReaderTest, WithoutRequiredTagsReadsTagsOnlyWhenEveryLineHasThem) {
  absl::StatusOr<std::vector<TaggedSentence>> tagged = Read("d.conll", "a O\nb B-X\n", false);
  ASSERT_TRUE(tagged.ok()) << tagged.status();
  EXPECT_THAT((*tagged)[0].tags, ElementsAre("O", "B-X"));
  // One untagged line: no sentence gets tags, and every line's first field is its word.
  absl::StatusOr<std::vector<TaggedSentence>> words = Read("e.conll", "a O\nb\n\nc O\n", false);
  ASSERT_TRUE(words.ok()) << words.status();
  ASSERT_EQ(words->size(), 2u);
  EXPECT_THAT((*words)[0].words, ElementsAre("a", "b"));
  EXPECT_TRUE((*words)[0].tags.empty());
  EXPECT_THAT((*words)[1].words, ElementsAre("c"));
  EXPECT_TRUE((*words)[1].tags.empty());
}

TEST(ConllReaderTest, RejectsWhitespaceOnlyWordsEmptyFilesAndFilesWithoutSentences) {
  // A no-break space between ASCII separators is a word of whitespace only.
  EXPECT_THAT(ErrorOf("f.conll", "a O\n\xC2\xA0 O\n"),
              HasSubstr("f.conll:2: the word is whitespace only"));
  EXPECT_EQ(ErrorOf("g.conll", "\xEF\xBB\xBF \n\n"), "g.conll: file is empty");
  EXPECT_EQ(ErrorOf("h.conll", "-DOCSTART- O\n\n"),
            "h.conll: no sentences (only blank and -DOCSTART- lines)");
}

TEST(TaggedFormatTest, UnknownExtensionListsTheAcceptedOnes) {
  EXPECT_EQ(ErrorOf("i.tsv", "a\tO\n"),
            "i.tsv: unknown format for tagged sentences; expected .conll, .txt or .jsonl");
  EXPECT_FALSE(ReadTaggedSentences("/nonexistent/x.conll", {}, true).ok());
}

TEST(JsonlTaggedReaderTest, ReadsWordsAndTagsWithLinesAndCustomColumns) {
  WordTagColumns columns;
  columns.tokens_column = "words";
  columns.tags_column = "labels";
  absl::StatusOr<std::vector<TaggedSentence>> sentences = Read(
      "j.jsonl",
      "{\"words\": [\"Ça\", \"va\"], \"labels\": [\"O\", \"B-MISC\"], \"id\": 1}\r\n\n"
      "{\"words\": [\"東京\"], \"labels\": [\"B-LOC\"]}\n",
      true, columns);
  ASSERT_TRUE(sentences.ok()) << sentences.status();
  ASSERT_EQ(sentences->size(), 2u);
  EXPECT_THAT((*sentences)[0].words, ElementsAre("Ça", "va"));
  EXPECT_THAT((*sentences)[0].tags, ElementsAre("O", "B-MISC"));
  EXPECT_EQ((*sentences)[1].line, 3);
}

TEST(JsonlTaggedReaderTest, TagsAreOptionalWithoutRequireTags) {
  absl::StatusOr<std::vector<TaggedSentence>> sentences =
      Read("k.jsonl", "{\"tokens\": [\"a\"]}\n{\"tokens\": [\"b\"], \"ner_tags\": null}\n", false);
  ASSERT_TRUE(sentences.ok()) << sentences.status();
  EXPECT_TRUE((*sentences)[0].tags.empty());
  EXPECT_TRUE((*sentences)[1].tags.empty());
}

TEST(JsonlTaggedReaderTest, ErrorsNameTheLineTheFieldAndTheFlag) {
  EXPECT_EQ(ErrorOf("l.jsonl", "{\"tokens\": [\"a\", \"b\"], \"ner_tags\": [\"O\"]}\n"),
            "l.jsonl:1: field 'tokens' (--tokens_column) has 2 words but field 'ner_tags' "
            "(--tags_column) has 1 tags");
  EXPECT_EQ(ErrorOf("m.jsonl", "\n{\"tokens\": [\"a\"], \"ner_tags\": [3]}\n"),
            "m.jsonl:2: ner_tags[0] (--tags_column) is the integer 3; expected string tags such "
            "as \"B-PER\" (class ids have no names in the file)");
  EXPECT_EQ(ErrorOf("n.jsonl", "{\"words\": [\"a\"]}\n"),
            "n.jsonl:1: no field 'tokens' (fields: words); set --tokens_column");
  EXPECT_EQ(ErrorOf("o.jsonl", "{\"tokens\": [\"a\"]}\n"),
            "o.jsonl:1: no field 'ner_tags' (fields: tokens); set --tags_column");
  EXPECT_EQ(ErrorOf("p.jsonl", "{\"tokens\": []}\n", false),
            "p.jsonl:1: field 'tokens' (--tokens_column) has no words; expected a sentence");
  EXPECT_EQ(ErrorOf("q.jsonl", "{\"tokens\": [\"a\", \" \\t\"]}\n", false),
            "q.jsonl:1: tokens[1] (--tokens_column) is whitespace only; expected a word (the "
            "tokenizer would give it no token)");
  EXPECT_EQ(ErrorOf("r.jsonl", "{\"tokens\": [\"\"]}\n", false),
            "r.jsonl:1: tokens[0] (--tokens_column) is empty; expected a word (the tokenizer "
            "would give it no token)");
  EXPECT_EQ(ErrorOf("s.jsonl", "{\"tokens\": \"a b\"}\n", false),
            "s.jsonl:1: field 'tokens' (--tokens_column) must be an array of words (strings), "
            "found string");
  EXPECT_EQ(ErrorOf("t.jsonl", "{\"tokens\": [\"a\", 1.5]}\n", false),
            "t.jsonl:1: tokens[1] (--tokens_column) must be a string, found number 1.5");
  EXPECT_EQ(ErrorOf("u.jsonl", "{\"tokens\": [\"a\"], \"ner_tags\": [\"\"]}\n"),
            "u.jsonl:1: ner_tags[0] (--tags_column) is empty; expected a tag such as \"O\"");
  EXPECT_THAT(ErrorOf("v.jsonl", "[1]\n"), HasSubstr("v.jsonl:1: expected a JSON object, found array"));
  EXPECT_THAT(ErrorOf("w.jsonl", "{\"tokens\": [\n"), HasSubstr("w.jsonl:1: invalid JSON ("));
}

}  // namespace
}  // namespace xlmr::data
