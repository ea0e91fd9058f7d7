// Loaded by GtUnload's own class loader, compiled, then unloaded with it.
public class GtUnloadable {
    public static long work(int n) {
        long s = 0;
        for (int i = 0; i < 200; i++)
            s = s * 31 + (n ^ i);
        return s;
    }
}
