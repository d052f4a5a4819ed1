package org.trainwatch;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Loads the JNI library at the first use of any class, from the first of:
 * <ol>
 *   <li>{@code -Dorg.trainwatch.library=<path>}: that file;</li>
 *   <li>the jar's {@code META-INF/native/linux-x86_64/} (the released jar, as sqlite-jdbc and JNA ship
 *       theirs): its libraries are extracted into a private temporary folder (under
 *       {@code -Dorg.trainwatch.tmpdir}, else {@code java.io.tmpdir}), deleted when the JVM exits, and
 *       loaded in the order {@code libraries.txt} there lists (each after all it needs);</li>
 *   <li>{@code libtrainwatch_jni.so} from {@code java.library.path} (a build tree).</li>
 * </ol>
 */
final class NativeLibraries {
  static final String PLATFORM = "linux-x86_64";
  static final String RESOURCES = "/META-INF/native/" + PLATFORM + "/";
  static final String ORDER = "libraries.txt";

  private NativeLibraries() {}

  static void load() {
    String path = System.getProperty("org.trainwatch.library");
    if (path != null && !path.isEmpty()) {
      System.load(path);
      return;
    }
    List<String> order = bundledLibraries();
    if (order == null) {
      System.loadLibrary("trainwatch_jni");
      return;
    }
    String platform = platform();
    if (!platform.equals(PLATFORM)) {
      throw new UnsatisfiedLinkError("trainwatch's jar carries native libraries for " + PLATFORM + " only, not "
                                     + platform + "; build the library for it and pass -Dorg.trainwatch.library");
    }
    Path folder;
    try {
      folder = extract(order);
    } catch (IOException e) {
      UnsatisfiedLinkError error = new UnsatisfiedLinkError(
          "cannot extract trainwatch's native libraries from its jar: " + e);
      error.initCause(e);
      throw error;
    }
    for (String name : order) {
      try {
        System.load(folder.resolve(name).toString());
      } catch (UnsatisfiedLinkError e) {
        UnsatisfiedLinkError error = new UnsatisfiedLinkError(
            "cannot load " + name + " extracted from trainwatch's jar into " + folder + ": " + e.getMessage()
            + " (where that folder's file system is mounted noexec, -Dorg.trainwatch.tmpdir chooses another)");
        error.initCause(e);
        throw error;
      }
    }
  }

  /** The names libraries.txt lists, or null when the jar carries no native libraries. */
  private static List<String> bundledLibraries() {
    try (InputStream index = NativeLibraries.class.getResourceAsStream(RESOURCES + ORDER)) {
      if (index == null) return null;
      List<String> names = new ArrayList<>();
      BufferedReader reader = new BufferedReader(new InputStreamReader(index, StandardCharsets.UTF_8));
      for (String line; (line = reader.readLine()) != null;) {
        if (!line.trim().isEmpty()) names.add(line.trim());
      }
      return names;
    } catch (IOException e) {
      throw new UnsatisfiedLinkError("cannot read " + RESOURCES + ORDER + " in trainwatch's jar: " + e);
    }
  }

  /** os-arch in the jar's spelling: linux-x86_64, linux-aarch64, … */
  private static String platform() {
    String os = System.getProperty("os.name", "").toLowerCase(Locale.ROOT).replaceAll("\\s", "");
    String arch = System.getProperty("os.arch", "").toLowerCase(Locale.ROOT);
    if (arch.equals("amd64") || arch.equals("x86_64")) arch = "x86_64";
    return os + "-" + arch;
  }

  /** A new folder only this user can write (createTempDirectory's default), holding the libraries. */
  private static Path extract(List<String> names) throws IOException {
    String base = System.getProperty("org.trainwatch.tmpdir", System.getProperty("java.io.tmpdir"));
    Path folder = Files.createTempDirectory(Paths.get(base), "trainwatch-native-");
    // deleteOnExit deletes in the reverse order of registration: the files, then their folder.
    folder.toFile().deleteOnExit();
    for (String name : names) {
      Path target = folder.resolve(name);
      target.toFile().deleteOnExit();
      try (InputStream in = NativeLibraries.class.getResourceAsStream(RESOURCES + name)) {
        if (in == null) throw new IOException(RESOURCES + name + " is listed in " + ORDER + " but missing");
        Files.copy(in, target, StandardCopyOption.REPLACE_EXISTING);
      }
    }
    return folder;
  }
}
