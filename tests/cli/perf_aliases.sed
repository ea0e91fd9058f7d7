# Where glibc has several names for one address, perf takes its internal or versioned one
# (__libc_start_main_impl from DWARF, __GI_exit from the debug symbols, clock_gettime@@GLIBC_2.17
# from .dynsym, and now and then __clock_gettime from the debug symbols: a --call-graph dwarf
# sample in libc's clock_gettime rather than the vDSO's), galatop the exported one
# (__libc_start_main, exit, clock_gettime):
# docs/perfdata.md. Maps perf's names in folded stacks to galatop's, so that both compare
# (tests/cli/test_perfdata.sh, tests/bench/perfdata.sh).
s/;__libc_start_main_impl;/;__libc_start_main;/g
s/;__GI_/;/g
s/@@*GLIBC_[0-9.]*//g
s/;__clock_gettime\([; ]\)/;clock_gettime\1/g
