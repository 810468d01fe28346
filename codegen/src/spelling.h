// "did you mean ...?" suggestions for misspelled names.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace bp::codegen {

// Levenshtein distance (insertions, deletions, substitutions each cost 1).
size_t edit_distance(std::string_view a, std::string_view b);

// The candidate closest to `word`, if it is close enough to be a plausible typo: at most a
// third of the word's length away (and at least one edit is always allowed).
std::optional<std::string> closest_spelling(std::string_view word,
                                            const std::vector<std::string>& candidates);

// "; did you mean 'add.out'?" for a close candidate, else "": the tail of an error message.
std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates);

}  // namespace bp::codegen
