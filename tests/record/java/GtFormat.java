// Workload of tests/record/test_java.sh: alternates a String.format phase and a StringBuilder
// phase and, every 200 ms, prints the CPU nanoseconds (its own thread's, as the profiler's CPU
// samples see it) each phase took so far, the iterations done, the milliseconds since it
// started and the CPU nanoseconds of the whole JVM (all its threads: compilers, GC, agents)
// ("fmt bld iterations ms jvm"; tests/bench/java.sh reads the throughput from them). Half the
// StringBuilder calls go through reflection (builderBatch): with
// -Dsun.reflect.inflationThreshold=2147483647 that stays the JVM's native path, whose libjvm
// frames sit between two Java frames (--no-java-native hides them).
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.lang.reflect.Method;

public class GtFormat {
    static volatile long sink;

    static long formatPhase(int i) {
        return String.format("%d-%s-%08x", i, "x", i * 31).length();
    }

    static long builderPhase(int i) {
        StringBuilder sb = new StringBuilder();
        sb.append(i).append('-').append("x").append('-').append(i * 31);
        return sb.length();
    }

    static long builderBatch(int i) {
        long n = 0;
        for (int k = 0; k < 16; k++) n += builderPhase(i + k);
        return n;
    }

    public static void main(String[] a) throws Exception {
        Method viaReflection = GtFormat.class.getDeclaredMethod("builderBatch", int.class);
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        com.sun.management.OperatingSystemMXBean os =
            (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
        long start = System.nanoTime(), end = start + Long.parseLong(a[0]) * 1000000000L;
        long fmt = 0, bld = 0, next = System.nanoTime();
        long i = 0;
        while (System.nanoTime() < end) {
            // The arguments cycle through 2^20 values: growing numbers would lengthen the
            // strings and, at each new digit count or overflow, make the JIT recompile, so
            // the work per iteration would change with the run's length.
            long t0 = mx.getCurrentThreadCpuTime();
            for (int k = 0; k < 200; k++) sink += formatPhase((int) (i++ & 0xfffff));
            long t1 = mx.getCurrentThreadCpuTime();
            for (int k = 0; k < 8000; k += 16, i += 16) {
                int v = (int) (i & 0xfffff);
                sink += (k & 16) != 0 ? builderBatch(v) : (Long) viaReflection.invoke(null, v);
            }
            long t2 = mx.getCurrentThreadCpuTime();
            fmt += t1 - t0;
            bld += t2 - t1;
            long now = System.nanoTime();
            if (now >= next) {
                System.out.println(fmt + " " + bld + " " + i + " " + (now - start) / 1000000 + " " +
                                   os.getProcessCpuTime());
                next = now + 200000000L;
            }
        }
    }
}
