// trocar as an Unreal Engine 5 external module: the prebuilt library and its C header, for a plug-in's
// Source/ThirdParty/trocar (see README.md). stage.sh lays the directory out on Linux from scripts/install.sh's output:
//
//   trocar.Build.cs                                             this file
//   include/trocar.h                                            (and trocar.hpp, the C++17 wrapper)
//   lib/Linux/x86_64-unknown-linux-gnu/libtrocar.so             LinuxArm64/aarch64-unknown-linux-gnueabi on arm64
//   lib/Win64/trocar.dll, lib/Win64/trocar.dll.lib              cargo's output on Windows (the DLL and its import library)
//   lib/Mac/libtrocar.dylib                                     cargo's output on macOS (install name @rpath/libtrocar.dylib)
//
// Modules that use it list "trocar" in their PublicDependencyModuleNames (or Private...). WITH_TROCAR tells their
// code whether this platform has the library.

using System.IO;
using UnrealBuildTool;

public class trocar : ModuleRules
{
    public trocar(ReadOnlyTargetRules Target) : base(Target)
    {
        Type = ModuleType.External;

        string IncludeDir = Path.Combine(ModuleDirectory, "include");
        string Header = Existing(Path.Combine(IncludeDir, "trocar.h"));
        PublicSystemIncludePaths.Add(IncludeDir);
        // The rules read the header (the soname's ABI version): a new header re-runs them.
        ExternalDependencies.Add(Header);

        string LibDir = Path.Combine(ModuleDirectory, "lib");
        if (Target.Platform == UnrealTargetPlatform.Win64)
        {
            string Dll = Path.Combine(LibDir, "Win64", "trocar.dll");
            PublicAdditionalLibraries.Add(Existing(Path.Combine(LibDir, "Win64", "trocar.dll.lib")));
            // Delay-loaded: the module loads it from its own Binaries folder at startup (README), where the staging
            // below copies it; the executable's folder is not searched first in the editor.
            PublicDelayLoadDLLs.Add("trocar.dll");
            RuntimeDependencies.Add("$(BinaryOutputDir)/trocar.dll", Existing(Dll));
        }
        else if (Target.Platform == UnrealTargetPlatform.Mac)
        {
            string Dylib = Existing(Path.Combine(LibDir, "Mac", "libtrocar.dylib"));
            PublicAdditionalLibraries.Add(Dylib);
            RuntimeDependencies.Add("$(BinaryOutputDir)/libtrocar.dylib", Dylib);
        }
        else if (Target.Platform == UnrealTargetPlatform.Linux || Target.Platform == UnrealTargetPlatform.LinuxArm64)
        {
            string Arch = Target.Platform == UnrealTargetPlatform.Linux
                ? Path.Combine("Linux", "x86_64-unknown-linux-gnu")
                : Path.Combine("LinuxArm64", "aarch64-unknown-linux-gnueabi");
            string So = Existing(Path.Combine(LibDir, Arch, "libtrocar.so"));
            // Linking libtrocar.so records its soname, libtrocar.so.<ABI>: that is the file the loader looks for
            // next to the module ($ORIGIN), so it is staged under that name.
            PublicAdditionalLibraries.Add(So);
            RuntimeDependencies.Add("$(BinaryOutputDir)/libtrocar.so." + AbiVersion(Header), So);
        }
        else
        {
            PublicDefinitions.Add("WITH_TROCAR=0");
            return;
        }
        PublicDefinitions.Add("WITH_TROCAR=1");
    }

    // A missing library is named here, not as an unresolved symbol at link time.
    static string Existing(string PathName)
    {
        if (!File.Exists(PathName))
            throw new FileNotFoundException("trocar: " + PathName + " is missing: lay the module out with " +
                "examples_c/unreal_thirdparty/stage.sh or copy cargo's output there (see its README)", PathName);
        return PathName;
    }

    // The Linux library's soname suffix from the header: "0.<minor>" while the major is 0 (each 0.x minor may break
    // the ABI), else "<major>".
    static string AbiVersion(string Header)
    {
        string Major = Define(Header, "TROCAR_VERSION_MAJOR");
        return Major == "0" ? "0." + Define(Header, "TROCAR_VERSION_MINOR") : Major;
    }

    static string Define(string Header, string Name)
    {
        string Prefix = "#define " + Name + " ";
        foreach (string Line in File.ReadAllLines(Header))
            if (Line.StartsWith(Prefix))
                return Line.Substring(Prefix.Length).Trim();
        throw new InvalidDataException("trocar: no " + Name + " in " + Header);
    }
}
