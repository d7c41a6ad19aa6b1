//! Writing skills: `create`, `install_dir`, `install_text` — each skill
//! whole or not at all, nothing overwritten, nothing unsafe copied.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a failed unwrap is a failed test"
)]

use std::fs;
use std::path::Path;

use toolgate_skills::{
    MAX_INSTALL_BYTES, MAX_INSTALL_ENTRIES, SkillError, SkillFile, SkillOrigin, create,
    install_dir, install_text,
};

/// Every entry under `dir`, hidden ones too, as sorted relative paths.
fn tree(dir: &Path) -> Vec<String> {
    fn walk(dir: &Path, prefix: &str, out: &mut Vec<String>) {
        let Ok(entries) = fs::read_dir(dir) else {
            return;
        };
        for entry in entries {
            let entry = entry.unwrap();
            let name = format!("{prefix}{}", entry.file_name().to_string_lossy());
            let kind = entry.file_type().unwrap();
            out.push(name.clone());
            if kind.is_dir() {
                walk(&entry.path(), &format!("{name}/"), out);
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, "", &mut out);
    out.sort();
    out
}

const PDF: &str =
    "---\nname: pdf-forms\ndescription: Fill in PDF forms.\n---\nRun scripts/fill.sh.\n";

/// A skill directory to install from, named unlike its skill.
fn source(parent: &Path) -> std::path::PathBuf {
    let src = parent.join("pdf-forms-main");
    fs::create_dir_all(src.join("scripts/lib")).unwrap();
    fs::write(src.join("SKILL.md"), PDF).unwrap();
    fs::write(src.join("scripts/fill.sh"), "#!/bin/sh\necho filled\n").unwrap();
    fs::write(src.join("scripts/lib/util.sh"), "util\n").unwrap();
    fs::write(src.join("reference.md"), "# Reference\n").unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        fs::set_permissions(
            src.join("scripts/fill.sh"),
            fs::Permissions::from_mode(0o4755),
        )
        .unwrap();
    }
    src
}

#[test]
fn a_created_skill_parses_back() {
    let root = tempfile::tempdir().unwrap();
    let skills = root.path().join("new/skills");
    let description = "Write release notes: from `git log`, grouped by \"type\" # not a comment";
    let file = create(&skills, "release-notes", description).unwrap();
    assert_eq!(file, skills.join("release-notes/SKILL.md"));
    let parsed = SkillFile::read(&file).unwrap();
    assert_eq!(parsed.name, "release-notes");
    assert_eq!(parsed.description, description);
    assert!(
        parsed.body.starts_with("# release-notes\n"),
        "{}",
        parsed.body
    );
    assert!(parsed.warnings.is_empty());
    assert_eq!(tree(&skills), ["release-notes", "release-notes/SKILL.md"]);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = fs::metadata(skills.join("release-notes"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o755);
    }
}

#[test]
fn create_refuses_what_the_format_refuses_and_writes_nothing() {
    let root = tempfile::tempdir().unwrap();
    // (name, description, message)
    let cases: &[(&str, &str, String)] = &[
        (
            "Release",
            "d",
            format!(
                "{}:2: name \"Release\": use lowercase letters, digits and hyphens",
                root.path().join("Release/SKILL.md").display()
            ),
        ),
        (
            "../escape",
            "d",
            format!(
                "{}:2: name \"../escape\": use lowercase letters, digits and hyphens",
                root.path().join("../escape/SKILL.md").display()
            ),
        ),
        (
            "notes",
            "  ",
            format!(
                "{}:3: `description` is empty",
                root.path().join("notes/SKILL.md").display()
            ),
        ),
        (
            "notes",
            &"x".repeat(1025),
            format!(
                "{}:3: `description` is 1025 characters; at most 1024 are allowed",
                root.path().join("notes/SKILL.md").display()
            ),
        ),
    ];
    for (name, description, message) in cases {
        let error = create(root.path(), name, description).unwrap_err();
        assert_eq!(&error.to_string(), message);
    }
    assert_eq!(tree(root.path()), Vec::<String>::new());
    assert!(!root.path().join("../escape").exists());
}

#[test]
fn create_never_overwrites() {
    let root = tempfile::tempdir().unwrap();
    let existing = root.path().join("notes");
    fs::create_dir_all(&existing).unwrap();
    fs::write(existing.join("mine.txt"), "keep").unwrap();
    let error = create(root.path(), "notes", "d").unwrap_err();
    assert!(matches!(error, SkillError::Exists { .. }));
    assert_eq!(
        error.to_string(),
        format!(
            "{} already exists; remove it first or choose another name",
            existing.display()
        )
    );
    assert_eq!(tree(root.path()), ["notes", "notes/mine.txt"]);
}

#[test]
fn a_directory_installs_under_the_name_in_its_frontmatter() {
    let tmp = tempfile::tempdir().unwrap();
    let src = source(tmp.path());
    fs::create_dir_all(src.join(".git/objects")).unwrap();
    fs::write(src.join(".git/HEAD"), "ref: main\n").unwrap();
    let dest = tmp.path().join("skills");

    let skill = install_dir(&src, &dest, SkillOrigin::User).unwrap();
    assert_eq!(skill.name, "pdf-forms");
    assert_eq!(skill.dir, dest.join("pdf-forms"));
    assert_eq!(skill.file, dest.join("pdf-forms/SKILL.md"));
    assert_eq!(skill.origin, SkillOrigin::User);
    assert_eq!(skill.body, "Run scripts/fill.sh.");
    assert_eq!(
        tree(&dest),
        [
            "pdf-forms",
            "pdf-forms/SKILL.md",
            "pdf-forms/reference.md",
            "pdf-forms/scripts",
            "pdf-forms/scripts/fill.sh",
            "pdf-forms/scripts/lib",
            "pdf-forms/scripts/lib/util.sh",
        ]
    );
    assert_eq!(
        fs::read_to_string(dest.join("pdf-forms/scripts/fill.sh")).unwrap(),
        "#!/bin/sh\necho filled\n"
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = |p: &str| fs::metadata(dest.join(p)).unwrap().permissions().mode() & 0o7777;
        // Executable kept, set-user-ID dropped.
        assert_eq!(mode("pdf-forms/scripts/fill.sh"), 0o755);
        assert_eq!(mode("pdf-forms"), 0o755);
    }
    // What was installed is what discovery reads.
    assert_eq!(SkillFile::read(&skill.file).unwrap().name, "pdf-forms");

    // Naming the SKILL.md installs its directory; the name is taken now.
    let again = install_dir(&src.join("SKILL.md"), &dest, SkillOrigin::User).unwrap_err();
    assert!(matches!(again, SkillError::Exists { .. }), "{again}");
    let other = tmp.path().join("other");
    let skill = install_dir(&src.join("SKILL.md"), &other, SkillOrigin::Config).unwrap();
    assert_eq!(skill.dir, other.join("pdf-forms"));
    assert_eq!(skill.origin, SkillOrigin::Config);
}

#[test]
fn an_existing_skill_is_left_alone() {
    let tmp = tempfile::tempdir().unwrap();
    let src = source(tmp.path());
    let dest = tmp.path().join("skills");
    fs::create_dir_all(dest.join("pdf-forms")).unwrap();
    fs::write(dest.join("pdf-forms/SKILL.md"), "mine").unwrap();
    let error = install_dir(&src, &dest, SkillOrigin::User).unwrap_err();
    assert_eq!(
        error.to_string(),
        format!(
            "{} already exists; remove it first or choose another name",
            dest.join("pdf-forms").display()
        )
    );
    assert_eq!(tree(&dest), ["pdf-forms", "pdf-forms/SKILL.md"]);
    assert_eq!(
        fs::read_to_string(dest.join("pdf-forms/SKILL.md")).unwrap(),
        "mine"
    );
}

#[cfg(unix)]
#[test]
fn links_and_special_files_refuse_the_whole_install() {
    use std::os::unix::fs::symlink;
    use std::os::unix::net::UnixListener;

    let tmp = tempfile::tempdir().unwrap();
    let dest = tmp.path().join("skills");
    fs::create_dir_all(&dest).unwrap();

    let linked = source(&tmp.path().join("a"));
    symlink("/etc/passwd", linked.join("scripts/lib/passwd")).unwrap();
    let error = install_dir(&linked, &dest, SkillOrigin::User).unwrap_err();
    assert_eq!(
        error.to_string(),
        format!(
            "{} is a symbolic link; a skill may hold only regular files and directories",
            fs::canonicalize(&linked)
                .unwrap()
                .join("scripts/lib/passwd")
                .display()
        )
    );
    assert_eq!(
        tree(&dest),
        Vec::<String>::new(),
        "half-written install left"
    );

    let socket = source(&tmp.path().join("b"));
    let _listener = UnixListener::bind(socket.join("agent.sock")).unwrap();
    let error = install_dir(&socket, &dest, SkillOrigin::User).unwrap_err();
    assert!(
        matches!(error, SkillError::Unsupported { kind: "socket", .. }),
        "{error}"
    );
    assert_eq!(tree(&dest), Vec::<String>::new());

    // A linked SKILL.md is refused before anything is read.
    let link_file = tmp.path().join("c/pdf-forms");
    fs::create_dir_all(&link_file).unwrap();
    fs::write(tmp.path().join("c/real.md"), PDF).unwrap();
    symlink(tmp.path().join("c/real.md"), link_file.join("SKILL.md")).unwrap();
    let error = install_dir(&link_file, &dest, SkillOrigin::User).unwrap_err();
    assert!(
        matches!(
            error,
            SkillError::Unsupported {
                kind: "symbolic link",
                ..
            }
        ),
        "{error}"
    );
    assert_eq!(tree(&dest), Vec::<String>::new());
}

#[test]
fn limits_refuse_the_whole_install() {
    let tmp = tempfile::tempdir().unwrap();
    let dest = tmp.path().join("skills");

    let big = source(&tmp.path().join("big"));
    let half = usize::try_from(MAX_INSTALL_BYTES / 2).unwrap();
    fs::write(big.join("a.bin"), vec![0u8; half]).unwrap();
    fs::write(big.join("b.bin"), vec![0u8; half]).unwrap();
    let error = install_dir(&big, &dest, SkillOrigin::User).unwrap_err();
    assert_eq!(
        error.to_string(),
        format!(
            "{} is too large to install: more than 10485760 bytes",
            fs::canonicalize(&big).unwrap().display()
        )
    );
    assert_eq!(tree(&dest), Vec::<String>::new());

    let many = source(&tmp.path().join("many"));
    for i in 0..MAX_INSTALL_ENTRIES {
        fs::write(many.join(format!("f{i}")), "").unwrap();
    }
    let error = install_dir(&many, &dest, SkillOrigin::User).unwrap_err();
    assert!(
        error
            .to_string()
            .ends_with("is too large to install: more than 1000 files and directories"),
        "{error}"
    );
    assert_eq!(tree(&dest), Vec::<String>::new());

    let deep = source(&tmp.path().join("deep"));
    let mut nested = deep.clone();
    for _ in 0..20 {
        nested.push("d");
    }
    fs::create_dir_all(&nested).unwrap();
    let error = install_dir(&deep, &dest, SkillOrigin::User).unwrap_err();
    assert!(
        error
            .to_string()
            .ends_with("directories nested more than 16 deep"),
        "{error}"
    );
    assert_eq!(tree(&dest), Vec::<String>::new());
}

#[test]
fn an_invalid_source_is_refused_before_anything_is_written() {
    let tmp = tempfile::tempdir().unwrap();
    let dest = tmp.path().join("skills");
    let src = tmp.path().join("src");
    fs::create_dir_all(&src).unwrap();
    fs::write(
        src.join("SKILL.md"),
        "---\nname: Bad\ndescription: d\n---\n",
    )
    .unwrap();
    let error = install_dir(&src, &dest, SkillOrigin::User).unwrap_err();
    assert_eq!(
        error.to_string(),
        format!(
            "{}:2: name \"Bad\": use lowercase letters, digits and hyphens",
            fs::canonicalize(&src).unwrap().join("SKILL.md").display()
        )
    );
    assert!(!dest.exists());

    let empty = tmp.path().join("empty");
    fs::create_dir_all(&empty).unwrap();
    let error = install_dir(&empty, &dest, SkillOrigin::User).unwrap_err();
    assert!(error.to_string().starts_with("cannot read "), "{error}");
    assert!(!dest.exists());
}

#[test]
fn a_downloaded_file_installs_as_given() {
    let tmp = tempfile::tempdir().unwrap();
    let dest = tmp.path().join("skills");
    let url = "https://example.com/skills/pdf/SKILL.md";
    let text =
        "\u{feff}---\r\nname: pdf-forms\r\ndescription: Fill in PDF forms.\r\n---\r\nSteps.\r\n";
    let skill = install_text(text, url, &dest, SkillOrigin::Workspace).unwrap();
    assert_eq!(skill.name, "pdf-forms");
    assert_eq!(skill.file, dest.join("pdf-forms/SKILL.md"));
    assert_eq!(skill.origin, SkillOrigin::Workspace);
    assert_eq!(skill.body, "Steps.");
    assert_eq!(fs::read_to_string(&skill.file).unwrap(), text);
    assert_eq!(tree(&dest), ["pdf-forms", "pdf-forms/SKILL.md"]);

    let error = install_text(text, url, &dest, SkillOrigin::Workspace).unwrap_err();
    assert!(matches!(error, SkillError::Exists { .. }), "{error}");

    let error = install_text("<html>Not found</html>", url, &dest, SkillOrigin::User).unwrap_err();
    assert!(
        error
            .to_string()
            .starts_with("https://example.com/skills/pdf/SKILL.md:1: no frontmatter"),
        "{error}"
    );
    let huge = format!("{PDF}{}", "x".repeat(300 * 1024));
    let error = install_text(&huge, url, &dest, SkillOrigin::User).unwrap_err();
    assert!(matches!(error, SkillError::TooLarge { .. }), "{error}");
    assert_eq!(tree(&dest), ["pdf-forms", "pdf-forms/SKILL.md"]);
}
