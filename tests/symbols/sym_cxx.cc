// C++ test target for demangling: prints the address of ns::Foo<int>::bar(int), then "ready",
// and exits when stdin closes.
#include <cstdio>
#include <cstring>
#include <unistd.h>

namespace ns {
template <class T> struct Foo {
	__attribute__((noinline)) T bar(T x);
};
template <class T> T Foo<T>::bar(T x)
{
	return x * 7;
}
template struct Foo<int>;
} // namespace ns

int main()
{
	int (ns::Foo<int>::*pm)(int) = &ns::Foo<int>::bar;
	void *addr;
	char buf[64];

	std::memcpy(&addr, &pm, sizeof(addr)); // Itanium ABI: non-virtual -> the function address
	std::printf("bar %p\nready\n", addr);
	std::fflush(stdout);
	while (read(0, buf, sizeof(buf)) > 0)
		;
	ns::Foo<int> f;
	return f.bar(1) == 3;
}
