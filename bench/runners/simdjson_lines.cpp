// simdjson line by line, for bench/run.sh: the best general JSON validator, used the
// way a host would use it on a stdio stream. Chunks are appended to a buffer; only the
// new bytes are searched for '\n' (memchr); each complete line is validated with the
// DOM parser (simdjson::dom::parser::parse: full validation of structure, strings,
// numbers and UTF-8; the On-Demand API only validates what is accessed, so it is not a
// validator); the partial last line is kept for the next chunk. Blank lines (only
// whitespace, e.g. a lone "\r") are skipped; "\r" before "\n" is JSON whitespace.
//
// Built twice by bench/run.sh, with -O3 -march=native and with plain -O3, against
// Debian's libsimdjson-dev. Note: the parsing kernels live in libsimdjson.so, which picks
// an implementation at run time (printed as impl=...), so -march=native only changes the
// code compiled here (the splitting and the inline parts of the API).
//
// Usage: simdjson-runner RUNNER CORPUS FILE CHUNK RUNS
// Prints: BENCH runner=.. corpus=.. chunk=.. bytes=.. messages=.. errors=.. seconds=<best>
//         median=.. runs=.. checksum=.. impl=..
#include <simdjson.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace {

struct Counts {
    uint64_t messages = 0, errors = 0, checksum = 0;
    bool operator!=(const Counts &o) const {
        return messages != o.messages || errors != o.errors || checksum != o.checksum;
    }
};

// A growable byte buffer that always keeps SIMDJSON_PADDING readable bytes past its end,
// so that any line inside it can be parsed in place.
class Buffer {
  public:
    void append(const char *p, size_t n) {
        reserve(len_ + n);
        std::memcpy(data_.data() + len_, p, n);
        len_ += n;
    }
    void consume(size_t n) {  // drop the first n bytes
        std::memmove(data_.data(), data_.data() + n, len_ - n);
        len_ -= n;
    }
    char *data() { return data_.data(); }
    size_t size() const { return len_; }

  private:
    void reserve(size_t n) {
        if (n + simdjson::SIMDJSON_PADDING > data_.size())
            data_.resize(std::max(2 * data_.size(), n + simdjson::SIMDJSON_PADDING));
    }
    std::vector<char> data_ = std::vector<char>(4096 + simdjson::SIMDJSON_PADDING);
    size_t len_ = 0;
};

inline void judge(simdjson::dom::parser &parser, const char *line, size_t len, Counts &c) {
    while (len > 0 && (line[len - 1] == '\r' || line[len - 1] == ' ' || line[len - 1] == '\t')) len--;
    if (len == 0) return;
    simdjson::dom::element doc;
    if (parser.parse(line, len, false).get(doc) == simdjson::SUCCESS)
        c.messages++;
    else
        c.errors++;
    c.checksum += len;
}

__attribute__((noinline)) Counts one_pass(simdjson::dom::parser &parser, const char *data, size_t size,
                                          size_t chunk) {
    Counts c;
    Buffer buf;
    size_t scanned = 0;  // bytes of buf already searched for '\n'
    for (size_t off = 0; off < size; off += chunk) {
        size_t n = std::min(chunk, size - off);
        buf.append(data + off, n);
        size_t start = 0;
        while (const void *nl = std::memchr(buf.data() + scanned, '\n', buf.size() - scanned)) {
            size_t end = static_cast<const char *>(nl) - buf.data();
            judge(parser, buf.data() + start, end - start, c);
            start = scanned = end + 1;
        }
        scanned = buf.size();
        if (start > 0) {
            buf.consume(start);
            scanned -= start;
        }
    }
    if (buf.size() > 0) judge(parser, buf.data(), buf.size(), c);
    return c;
}

}  // namespace

int main(int argc, char **argv) {
    if (argc != 6) {
        std::fprintf(stderr, "usage: %s RUNNER CORPUS FILE CHUNK RUNS\n", argv[0]);
        return 2;
    }
    std::ifstream in(argv[3], std::ios::binary);
    if (!in) {
        std::fprintf(stderr, "simdjson-runner: cannot open %s\n", argv[3]);
        return 2;
    }
    std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    size_t chunk = std::strtoull(argv[4], nullptr, 10);
    int runs = std::atoi(argv[5]);
    if (chunk == 0 || runs <= 0) {
        std::fprintf(stderr, "simdjson-runner: CHUNK and RUNS must be positive numbers\n");
        return 2;
    }
    simdjson::dom::parser parser;  // reused across lines and runs, as a host would
    std::vector<double> times;
    Counts first;
    for (int r = 0; r < runs; r++) {
        auto t = std::chrono::steady_clock::now();
        Counts c = one_pass(parser, data.data(), data.size(), chunk);
        times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count());
        if (r == 0)
            first = c;
        else if (c != first) {
            std::fprintf(stderr, "simdjson-runner: runs disagree\n");
            return 1;
        }
    }
    std::sort(times.begin(), times.end());
    std::printf("BENCH runner=%s corpus=%s chunk=%zu bytes=%zu messages=%llu errors=%llu seconds=%.9f "
                "median=%.9f runs=%d checksum=%llu impl=%s\n",
                argv[1], argv[2], chunk, data.size(), (unsigned long long)first.messages,
                (unsigned long long)first.errors, times[0], times[runs / 2], runs,
                (unsigned long long)first.checksum, simdjson::get_active_implementation()->name().c_str());
    return 0;
}
