//! Test certificates made with the `openssl` command line: certificate
//! authorities, and server and client certificates they sign.

use std::path::{Path, PathBuf};

/// Runs openssl in `dir`.
fn openssl(dir: &Path, args: &[&str]) {
    let status = std::process::Command::new("openssl")
        .current_dir(dir)
        .args(args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .expect("openssl is needed for the TLS tests (scripts/ensure-deps installs it)");
    assert!(status.success(), "openssl {args:?}");
}

/// A directory of keys and certificates.
pub struct Pki {
    pub dir: PathBuf,
}

impl Pki {
    pub fn new(dir: &Path) -> Pki {
        Pki { dir: dir.to_owned() }
    }

    /// A file in the directory, as a string.
    pub fn file(&self, name: &str) -> String {
        self.dir.join(name).to_string_lossy().into_owned()
    }

    /// Reads a file of the directory.
    pub fn read(&self, name: &str) -> Vec<u8> {
        std::fs::read(self.dir.join(name)).unwrap()
    }

    /// A self-signed CA: `<name>.pem`, `<name>.key`.
    pub fn ca(&self, name: &str) {
        openssl(
            &self.dir,
            &[
                "req",
                "-x509",
                "-newkey",
                "rsa:2048",
                "-nodes",
                "-keyout",
                &format!("{name}.key"),
                "-out",
                &format!("{name}.pem"),
                "-days",
                "2",
                "-subj",
                &format!("/CN={name}"),
            ],
        );
    }

    /// A certificate signed by CA `ca`, with extension line `ext` (e.g.
    /// `subjectAltName=IP:127.0.0.1` or `extendedKeyUsage=clientAuth`):
    /// `<name>.pem`, `<name>.key`.
    pub fn issue(&self, ca: &str, name: &str, ext: &str) {
        openssl(
            &self.dir,
            &[
                "req",
                "-newkey",
                "rsa:2048",
                "-nodes",
                "-keyout",
                &format!("{name}.key"),
                "-out",
                &format!("{name}.csr"),
                "-subj",
                &format!("/CN={name}"),
            ],
        );
        std::fs::write(self.dir.join(format!("{name}.ext")), ext).unwrap();
        openssl(
            &self.dir,
            &[
                "x509",
                "-req",
                "-in",
                &format!("{name}.csr"),
                "-CA",
                &format!("{ca}.pem"),
                "-CAkey",
                &format!("{ca}.key"),
                "-CAcreateserial",
                "-out",
                &format!("{name}.pem"),
                "-days",
                "2",
                "-extfile",
                &format!("{name}.ext"),
            ],
        );
    }
}
