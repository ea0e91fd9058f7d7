// Workload of tests/record/test_java.sh: compiles GtUnloadable.work, loaded by a class loader of
// its own, prints "ready" and waits for the file named by its argument; then drops the loader
// and collects until the class is gone (the JVM frees its compiled code: CompiledMethodUnload),
// prints "unloaded" and exits.
import java.io.File;
import java.lang.ref.WeakReference;
import java.lang.reflect.Method;
import java.nio.file.Files;

public class GtUnload {
    static volatile long sink;

    static class Loader extends ClassLoader {
        final byte[] code;

        Loader(byte[] code) {
            super(GtUnload.class.getClassLoader());
            this.code = code;
        }

        protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
            if (!name.equals("GtUnloadable"))
                return super.loadClass(name, resolve);
            synchronized (getClassLoadingLock(name)) {
                Class<?> c = findLoadedClass(name);
                return c != null ? c : defineClass(name, code, 0, code.length);
            }
        }
    }

    static WeakReference<Class<?>> load(byte[] code) throws Exception {
        Class<?> c = new Loader(code).loadClass("GtUnloadable");
        Method m = c.getMethod("work", int.class);
        for (int i = 0; i < 20000; i++)
            sink += (Long) m.invoke(null, i);
        return new WeakReference<>(c);
    }

    public static void main(String[] a) throws Exception {
        byte[] code = Files.readAllBytes(new File(GtUnload.class.getProtectionDomain().getCodeSource()
                .getLocation().toURI()).toPath().resolve("GtUnloadable.class"));
        WeakReference<Class<?>> ref = load(code);
        System.out.println("ready");
        File go = new File(a[0]);
        for (int i = 0; i < 600 && !go.exists(); i++)
            Thread.sleep(50);
        for (int i = 0; i < 50 && ref.get() != null; i++) {
            System.gc();
            Thread.sleep(20);
        }
        // the unload events are posted by the JVM's service thread after the collection
        Thread.sleep(500);
        System.out.println(ref.get() == null ? "unloaded" : "still loaded");
    }
}
