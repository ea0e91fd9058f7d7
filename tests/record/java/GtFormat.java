// Workload of tests/record/test_java.sh: alternates a String.format phase and a StringBuilder
// phase and, every 200 ms, prints the cumulative nanoseconds each phase took and the iterations
// done ("fmt bld iterations"; tests/bench/java.sh reads the throughput from them).
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

    public static void main(String[] a) {
        long end = System.nanoTime() + Long.parseLong(a[0]) * 1000000000L;
        long fmt = 0, bld = 0, next = System.nanoTime();
        int i = 0;
        while (System.nanoTime() < end) {
            long t0 = System.nanoTime();
            for (int k = 0; k < 200; k++) sink += formatPhase(i++);
            long t1 = System.nanoTime();
            for (int k = 0; k < 2000; k++) sink += builderPhase(i++);
            long t2 = System.nanoTime();
            fmt += t1 - t0;
            bld += t2 - t1;
            if (t2 >= next) {
                System.out.println(fmt + " " + bld + " " + i);
                next = t2 + 200000000L;
            }
        }
    }
}
