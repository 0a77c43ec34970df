// The strict parser of a .npy header's dict literal.
#include "model/data/npy_header.hpp"

#include <cctype>
#include <climits>

namespace troupe::detail {

namespace {

constexpr size_t header_excerpt = 200; // header characters quoted in an error

error format_error(const std::string& path, const std::string& what) {
  return fail(errc::bad_data, path + ": " + what);
}

// Parses the header's Python dict literal, as parse_npy_header says.
class header_parser {
public:
  header_parser(const std::string& path, const std::string& text)
      : path_(path), text_(text) {}

  expected<npy_header> parse() {
    npy_header header;
    skip_spaces();
    if (!eat('{'))
      return malformed("it does not start with '{'");
    for (;;) {
      skip_spaces();
      if (eat('}'))
        break;
      auto ok = parse_entry(header);
      if (!ok)
        return ok.error();
      skip_spaces();
      if (eat(','))
        continue;
      if (eat('}'))
        break;
      return malformed("expected ',' or '}'");
    }
    skip_spaces();
    if (pos_ != text_.size())
      return malformed("unexpected text after the closing '}'");
    const char* names[3] = {"descr", "fortran_order", "shape"};
    for (int i = 0; i < 3; ++i)
      if (!header.seen[i])
        return malformed(std::string("the key '") + names[i] + "' is missing");
    return header;
  }

private:
  void skip_spaces() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\n'))
      ++pos_;
  }

  bool eat(char c) {
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }

  troupe::error malformed(const std::string& what) const {
    std::string excerpt = text_.substr(0, header_excerpt);
    while (!excerpt.empty() && (excerpt.back() == ' ' || excerpt.back() == '\n'))
      excerpt.pop_back();
    return format_error(path_, "malformed .npy header: " + what + " at character "
                                 + std::to_string(pos_) + " of " + excerpt);
  }

  // A Python string literal without escapes, in single or double quotes.
  expected<std::string> parse_string(const char* what) {
    if (pos_ >= text_.size() || (text_[pos_] != '\'' && text_[pos_] != '"'))
      return malformed(std::string("expected a quoted ") + what);
    const char quote = text_[pos_++];
    const size_t end = text_.find(quote, pos_);
    if (end == std::string::npos)
      return malformed(std::string("unterminated ") + what);
    std::string value = text_.substr(pos_, end - pos_);
    if (value.find('\\') != std::string::npos)
      return malformed(std::string("escapes in the ") + what + " are not supported");
    pos_ = end + 1;
    return value;
  }

  status parse_entry(npy_header& header) {
    auto key = parse_string("key");
    if (!key)
      return key.error();
    skip_spaces();
    if (!eat(':'))
      return malformed("expected ':' after the key '" + *key + "'");
    skip_spaces();
    int index = *key == "descr" ? 0 : *key == "fortran_order" ? 1 : *key == "shape" ? 2 : -1;
    if (index < 0)
      return malformed("unexpected key '" + *key
                   + "' (a header holds exactly 'descr', 'fortran_order' and 'shape')");
    if (header.seen[index])
      return malformed("the key '" + *key + "' appears twice");
    header.seen[index] = true;
    if (index == 0)
      return parse_descr(header.descr);
    if (index == 1)
      return parse_bool(header.fortran_order);
    return parse_shape(header.shape);
  }

  status parse_descr(std::string& descr) {
    if (pos_ < text_.size() && text_[pos_] == '[')
      return format_error(path_, "unsupported dtype: a structured dtype (a list of fields); "
                                 "features and labels must be plain numeric arrays");
    auto value = parse_string("dtype");
    if (!value)
      return value.error();
    descr = *value;
    return {};
  }

  status parse_bool(bool& value) {
    if (text_.compare(pos_, 4, "True") == 0) {
      pos_ += 4;
      value = true;
    } else if (text_.compare(pos_, 5, "False") == 0) {
      pos_ += 5;
      value = false;
    } else {
      return malformed("'fortran_order' must be True or False");
    }
    return {};
  }

  expected<uint64_t> parse_int() {
    if (pos_ >= text_.size() || text_[pos_] < '0' || text_[pos_] > '9')
      return malformed("expected a non-negative integer in the shape");
    uint64_t value = 0;
    while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') {
      const uint64_t digit = static_cast<uint64_t>(text_[pos_] - '0');
      if (value > (UINT64_MAX - digit) / 10)
        return malformed("a dimension of the shape does not fit 64 bits");
      value = value * 10 + digit;
      ++pos_;
    }
    eat('L'); // Python 2 wrote long integers as 784L
    return value;
  }

  status parse_shape(std::vector<uint64_t>& shape) {
    if (!eat('('))
      return malformed("'shape' must be a tuple");
    skip_spaces();
    if (eat(')'))
      return {};
    for (;;) {
      auto dim = parse_int();
      if (!dim)
        return dim.error();
      shape.push_back(*dim);
      skip_spaces();
      if (eat(')')) {
        if (shape.size() == 1)
          return malformed("'shape' (" + std::to_string(*dim) + ") lacks the comma of a 1-tuple");
        return {};
      }
      if (!eat(','))
        return malformed("expected ',' or ')' in the shape");
      skip_spaces();
      if (eat(')'))
        return {};
    }
  }

  const std::string& path_;
  const std::string& text_;
  size_t pos_ = 0;
};

} // namespace

expected<npy_header> parse_npy_header(const std::string& path, const std::string& text) {
  return header_parser(path, text).parse();
}

} // namespace troupe::detail
