// SPDX-License-Identifier: MIT
/*
 * cxxwork.cpp: the C++ workload of scripts/bench_real.sh.  Container churn
 * as an ordinary C++ program does it: a std::map from std::string keys to
 * std::vector<std::string> values, updated over R rounds of K operations
 * (insert a key or append to its vector, erase a key, look one up and copy
 * its vector), with every string longer than the small-string buffer, so
 * each one is a heap block.  Every allocation goes through operator new
 * and every free through operator delete (libstdc++'s, which call glibc's
 * malloc and free).  A fixed xorshift PRNG (seed -s) makes every run the
 * same sequence of calls.
 *
 * Prints one line: "cxxwork: rounds=R ops=K keys=... checksum=..." (the
 * checksum depends on every container's contents, so the work cannot be
 * optimised away).
 *
 * Built as Debian builds a package: g++ -O2 -g (no frame pointers).
 */
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

static uint64_t rng_state = 1;

static uint64_t rng()
{
	uint64_t x = rng_state;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return rng_state = x;
}

static std::string make_key(uint64_t n)
{
	// "key-" + 12+ digits: always longer than the 15-byte SSO buffer.
	char buf[48];
	std::snprintf(buf, sizeof(buf), "key-%012llu", (unsigned long long)n);
	return std::string(buf) + "-suffix";
}

static std::string make_value(uint64_t r)
{
	std::string v(16 + r % 200, 'a' + (char)(r % 26));
	v += std::to_string(r);
	return v;
}

int main(int argc, char **argv)
{
	unsigned long rounds = 20, ops = 2000, nkeys = 2000;
	for (int i = 1; i + 1 < argc; i += 2) {
		unsigned long v = std::strtoul(argv[i + 1], nullptr, 10);
		if (!std::strcmp(argv[i], "-r"))
			rounds = v;
		else if (!std::strcmp(argv[i], "-n"))
			ops = v;
		else if (!std::strcmp(argv[i], "-k"))
			nkeys = v;
		else if (!std::strcmp(argv[i], "-s"))
			rng_state = v ? v : 1;
		else {
			std::fprintf(stderr, "usage: cxxwork [-r ROUNDS] [-n OPS] [-k KEYS] [-s SEED]\n");
			return 2;
		}
	}

	std::map<std::string, std::vector<std::string>> m;
	uint64_t checksum = 0;
	for (unsigned long r = 0; r < rounds; r++) {
		for (unsigned long i = 0; i < ops; i++) {
			uint64_t x = rng();
			std::string key = make_key(x % nkeys);
			switch (x >> 60 & 3) {
			case 0:
			case 1: { // insert or append
				auto &vec = m[key];
				vec.push_back(make_value(x >> 8));
				if (vec.size() > 8)
					vec.erase(vec.begin());
				break;
			}
			case 2: // erase
				m.erase(key);
				break;
			default: { // look up and copy
				auto it = m.find(key);
				if (it != m.end()) {
					std::vector<std::string> copy = it->second;
					for (const auto &s : copy)
						checksum += s.size();
				}
				break;
			}
			}
		}
		checksum = checksum * 31 + m.size();
	}
	std::printf("cxxwork: rounds=%lu ops=%lu keys=%zu checksum=%llu\n", rounds, ops, m.size(),
		    (unsigned long long)checksum);
	return 0;
}
