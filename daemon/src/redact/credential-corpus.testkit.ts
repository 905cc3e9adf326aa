/**
 * Credential files as tools write them, each with the values that must never
 * leave the daemon: the corpus the redaction tests and the every-sink test
 * (tests/redaction/every-sink.test.ts) send through every path a file's content
 * can take. Every path here is on the built-in forbidden list
 * (workspace/forbidden.ts), and every value is redacted by the value shapes
 * (redact/rules.ts) when the same text sits in an ordinary file.
 */
export interface CredentialFile {
  path: string;
  content: string;
  /** the secret parts of `content` */
  secrets: string[];
  /** a binary store: only the forbidden list keeps it in, no text shape can find its values */
  binary?: true;
}

export const CREDENTIAL_CORPUS: readonly CredentialFile[] = [
  {
    path: ".git-credentials",
    content: "https://alice:gitCredPw7Qx2@github.example.com\nhttps://x-access-token:Zq9Lm3Wp8Rt5@git.example.org\n",
    secrets: ["gitCredPw7Qx2", "Zq9Lm3Wp8Rt5"],
  },
  { path: ".pgpass", content: "db.internal:5432:orders:app:pgPassW0rd-91\n*:*:*:backup:bkupSecr3t\n", secrets: ["pgPassW0rd-91", "bkupSecr3t"] },
  {
    path: ".yarnrc.yml",
    content: 'npmRegistryServer: "https://npm.example.com"\nnpmAuthToken: yarnTok3nV4lue88\nnpmAuthIdent: "dXNlcjpwYXNzd29yZDE="\n',
    secrets: ["yarnTok3nV4lue88", "dXNlcjpwYXNzd29yZDE="],
  },
  {
    path: "config/credentials.json",
    content:
      '{\n  "type": "service_account",\n  "client_secret": "gcpCl13ntS3cret",\n  "private_key": "-----BEGIN PRIVATE KEY-----\\nMIIEvQIBgcpKeyBody42Xm3Rt8Wq1Zp6Lk9Jv2Hn5Bc7Dg4Fs0Ay3Ue8Io1Pk5Qm7Rz2\\n-----END PRIVATE KEY-----\\n"\n}\n',
    secrets: ["gcpCl13ntS3cret", "MIIEvQIBgcpKeyBody42Xm3Rt8Wq1Zp6Lk9Jv2Hn5Bc7Dg4Fs0Ay3Ue8Io1Pk5Qm7Rz2"],
  },
  {
    path: ".config/gh/hosts.yml",
    content: "github.com:\n    oauth_token: gho_Gh0authT0kenValue1234567890ab\n    user: alice\n",
    secrets: ["gho_Gh0authT0kenValue1234567890ab"],
  },
  {
    path: "infra/terraform.tfstate",
    content: '{"resources":[{"instances":[{"attributes":{"password":"tfStat3Passw0rd","secret_key":"tfS3cr3tKeyV4l"}}]}]}\n',
    secrets: ["tfStat3Passw0rd", "tfS3cr3tKeyV4l"],
  },
  { path: ".vault-token", content: "hvs.CAESIVaultT0kenValue0123456789abcd\n", secrets: ["hvs.CAESIVaultT0kenValue0123456789abcd"] },
  { path: ".cargo/credentials.toml", content: '[registry]\ntoken = "cioCargoT0ken4242"\n', secrets: ["cioCargoT0ken4242"] },
  {
    path: ".m2/settings.xml",
    content: "<settings><servers><server><id>central</id><username>deploy</username><password>mvnPassw0rd!x</password></server></servers></settings>\n",
    secrets: ["mvnPassw0rd!x"],
  },
  {
    path: "kubeconfig-prod",
    content: "users:\n- name: admin\n  user:\n    token: kubeB3arerTokenValue77\n    client-key-data: LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVktLS0tLQo=\n",
    secrets: ["kubeB3arerTokenValue77", "LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVktLS0tLQo="],
  },
  { path: ".kube/config", content: "users:\n- user:\n    password: kubeP4ssword\n", secrets: ["kubeP4ssword"] },
  {
    path: "deploy/.htpasswd",
    content: "admin:$apr1$r31.....$HqJZimcKQFAMYayBlzkrA/\nops:$2y$05$Wv7rTQWp1dqYwD9N6sZ0SeH2oU0rYk4xqS6yAeQo3Pq1b1Kx2s5Ju\n",
    secrets: ["HqJZimcKQFAMYayBlzkrA/", "Wv7rTQWp1dqYwD9N6sZ0SeH2oU0rYk4xqS6yAeQo3Pq1b1Kx2s5Ju"],
  },
  { path: "keys/release.jks", content: "\u00fe\u00ed\u00fe\u00edjksStoreBytes-55\n", secrets: ["jksStoreBytes-55"], binary: true },
  {
    path: "keys/signing.asc",
    content:
      "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\nlQOYBGPgpPrivBody9876q0Zx7RkW2mN4vT8yLc3Hs5Jd1Fa6Ug9Xe2Vb7Op4Ki8Lw3Qn\n-----END PGP PRIVATE KEY BLOCK-----\n",
    secrets: ["lQOYBGPgpPrivBody9876q0Zx7RkW2mN4vT8yLc3Hs5Jd1Fa6Ug9Xe2Vb7Op4Ki8Lw3Qn"],
  },
  {
    path: "etc/ssh/ssh_host_ed25519_key",
    content: "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaHostKeyBody31Tq8Wx2Zr5Mv9Kp3Ln7Jb4Hc6Gd1Fs0Ay8Ue2Io5Pk7Qm9Rz\n-----END OPENSSH PRIVATE KEY-----\n",
    secrets: ["b3BlbnNzaHostKeyBody31Tq8Wx2Zr5Mv9Kp3Ln7Jb4Hc6Gd1Fs0Ay8Ue2Io5Pk7Qm9Rz"],
  },
  { path: ".netrc", content: "machine api.example.com\n  login alice\n  password n3trcPassw0rd\n", secrets: ["n3trcPassw0rd"] },
  { path: ".docker/config.json", content: '{"auths":{"registry.example.com":{"auth":"YWxpY2U6ZG9ja2VyUGFzczk5"}}}\n', secrets: ["YWxpY2U6ZG9ja2VyUGFzczk5"] },
  {
    path: ".aws/credentials",
    content: "[default]\naws_access_key_id = AKIAQ3EGRTYUIOPASDFG\naws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n",
    secrets: ["AKIAQ3EGRTYUIOPASDFG", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"],
  },
  { path: ".terraformrc", content: 'credentials "app.terraform.io" {\n  token = "tfrcT0kenValue.atlasv1.x9"\n}\n', secrets: ["tfrcT0kenValue.atlasv1.x9"] },
];

/** Every secret value of the corpus. */
export const CORPUS_SECRETS: readonly string[] = CREDENTIAL_CORPUS.flatMap((f) => f.secrets);
