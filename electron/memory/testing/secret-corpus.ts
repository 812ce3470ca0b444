// A corpus for the secret filter: credentials in the sentences people and models really write
// (English and Chinese, every form the filter must catch, each kind in secretlint's recommended
// rules) and harmless texts that look close. Every value is fake — made here at run time from a
// fixed seed, in the right shape, so no scanner mistakes this file for a leak and no key is real.

export interface SecretSample {
  /** What form the sample exercises (for the report when one slips). */
  form: string;
  text: string;
}

// A fixed pseudo-random sequence: the same corpus on every run.
let seed = 0x5eed;
const next = () => {
  // mulberry32
  seed = (seed + 0x6d2b79f5) | 0;
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return (t ^ (t >>> 14)) >>> 0;
};
const from = (alphabet: string, n: number) => Array.from({ length: n }, () => alphabet[next() % alphabet.length]).join('');
const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const alnum = (n: number) => {
  // Always mixes letters and digits, as a real token does.
  const s = from(ALNUM, n - 2);
  return `${s.slice(0, n >> 1)}7${s.slice(n >> 1)}q`;
};
const upper = (n: number) => from('ABCDEFGHIJKLMNOPQRSTUVWXYZ234567', n);
const hex = (n: number) => from('0123456789abcdef', n);
const b64 = (n: number) => from(`${ALNUM}+/`, n - 1) + '9';
const letters = (n: number) => from('ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz', n);
const digits = (n: number) => from('0123456789', n);
const base64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');
const base64url = (s: string) => Buffer.from(s, 'utf8').toString('base64url');
// Prefixes are joined at run time so this file holds none of them whole.
const p = (...parts: string[]) => parts.join('');

const awsSecret = b64(40);
const openai = p('sk', '-proj-', alnum(74), 'T3Blbk', 'FJ', alnum(74));
const anthropic = p('sk', '-ant-api03-', alnum(93), 'AA');
const ghp = p('gh', 'p_', alnum(36));
const jwt = [base64url('{"alg":"HS256","typ":"JWT"}'), base64url(`{"sub":"${digits(10)}","name":"Mara","iat":${digits(10)}}`), alnum(43)].join('.');
const stripeLive = p('sk', '_live_', alnum(24));
const pem = [
  p('-----BEGIN RSA ', 'PRIVATE KEY-----'),
  ...Array.from({ length: 4 }, (_, i) => (i === 0 ? 'MIIEow' + b64(58) : b64(64))),
  p('-----END RSA ', 'PRIVATE KEY-----'),
].join('\n');
const zwsp = '\u200b';
// A service-account token is base64 of a JSON object; its last group is "fQ==" (a lone "}") when the
// JSON's length leaves one byte over.
const onePassword = () => {
  const json = (pad: string) =>
    JSON.stringify({ email: `${letters(13).toLowerCase()}${pad}@1passwordserviceaccounts.lcl`, secretKey: `A3-${upper(6)}-${upper(6)}`, srpX: hex(64) });
  let pad = '';
  while (json(pad).length % 3 !== 1) pad += 'x';
  return base64(json(pad));
};

export const CREDENTIALS: SecretSample[] = [
  // AWS
  { form: 'AWS secret key in prose', text: `My AWS secret access key is ${awsSecret}, please remember it.` },
  { form: 'AWS secret key in prose', text: `the aws secret key for prod: ${b64(40)}` },
  { form: 'AWS secret key assignment', text: `AWS_SECRET_ACCESS_KEY=${b64(40)}` },
  { form: 'AWS access key id', text: `The deploy user's access key id is ${p('AK', 'IA')}${upper(16)} (us-east-1).` },
  { form: 'AWS session key id', text: `temporary creds: ${p('AS', 'IA')}${upper(16)}` },
  // Slack
  { form: 'Slack webhook', text: `Post alerts to https://hooks.slack.com/services/T${upper(8)}/B${upper(10)}/${alnum(24)} from now on.` },
  { form: 'Slack bot token', text: `Our bot uses ${p('xo', 'xb')}-${digits(12)}-${digits(13)}-${alnum(24)}` },
  { form: 'Slack app token', text: `app-level token ${p('xa', 'pp')}-1-A${upper(10)}-${digits(13)}-${hex(64)}` },
  // URLs with a password
  { form: 'https://user:pass@host', text: `The staging site is https://mara:Tr0ub4dor3x@staging.example.net/admin` },
  { form: 'ftp://user:pass@host', text: `backups go to ftp://deploy:${alnum(14)}@files.example.org/nightly` },
  { form: 'postgres URL with password', text: `connect with postgres://app_user:${alnum(16)}@db.internal:5432/prod` },
  { form: 'postgres URL with password', text: `记一下，数据库连接 postgresql://admin:Zq8rT2pLw@10.0.0.5/app` },
  { form: 'mongodb+srv URL with password', text: `mongo is mongodb+srv://mara:${alnum(18)}@cluster0.ab12c.mongodb.net/test?retryWrites=true` },
  { form: 'DATABASE_URL with password', text: `DATABASE_URL=postgres://svc:${alnum(20)}@pg.prod.internal:5432/orders` },
  { form: 'mysql URL with password', text: `the old blog used mysql://root:${alnum(12)}@127.0.0.1:3306/wordpress` },
  { form: 'redis URL with password', text: `cache: redis://default:${alnum(24)}@redis-12345.c1.cloud.example.com:12345` },
  { form: 'amqp URL with password', text: `queue at amqp://worker:${alnum(16)}@mq.example.com:5672/vhost` },
  // Passwords in prose, English
  { form: 'password in prose', text: 'my email password is Hunter2024!' },
  { form: 'password in prose', text: 'The wifi password was sunflower77, I wrote it down here.' },
  { form: 'password in prose', text: 'Password: Zx9kq2mLpw' },
  { form: 'password in prose (quoted)', text: `the password for the bank is 'bluebird'` },
  { form: 'passphrase in prose (quoted)', text: 'The new passphrase is "correct horse battery staple".' },
  { form: 'password in prose', text: 'My laptop password is now Kx!7mPq#2z' },
  { form: 'PIN in prose', text: 'the door pin code is 739201' },
  { form: 'token in prose', text: `the access token is ya29.${alnum(60)}` },
  { form: 'API key in prose (UUID)', text: `Heroku API key: ${hex(8)}-${hex(4)}-4${hex(3)}-a${hex(3)}-${hex(12)}` },
  { form: 'client secret in prose', text: `the OAuth client secret is ${alnum(32)}` },
  // Passwords in prose, Chinese
  { form: '密码是', text: '我的邮箱密码是 Tiger2024!' },
  { form: '密码是', text: '银行卡密码是739201，别告诉别人' },
  { form: '密码：', text: 'WiFi密码：happy8888' },
  { form: '密码：', text: '服务器 root 密码： Qw3rty!@#' },
  { form: '密码＝', text: '数据库密码＝Pg_s3cret_77' },
  { form: '密码=', text: '测试账号 mara，密码=abc12345' },
  { form: '口令为', text: '公司VPN的口令为 vpn#Secure9' },
  { form: '密钥是', text: '那个接口的密钥是 a8F3kL9qZ2xY' },
  { form: '令牌为', text: `部署用的令牌为 ${alnum(32)}` },
  { form: '改成了', text: '我把密码改成了 NewPass_2025' },
  { form: 'API key是', text: `我的API key是 ${alnum(28)}` },
  { form: 'token是', text: `机器人的 token 是 ${alnum(30)}` },
  { form: '授权码', text: '邮箱的SMTP授权码：qwerasdfzxcv1234' },
  // Keys split or hidden
  { form: 'key split across lines', text: `here is the key:\n${openai.slice(0, 60)}\n${openai.slice(60)}` },
  { form: 'key split across lines', text: `token\n${ghp.slice(0, 20)}\n${ghp.slice(20)}` },
  { form: 'key split across three lines', text: `${stripeLive.slice(0, 12)}\n  ${stripeLive.slice(12, 24)}\n  ${stripeLive.slice(24)}` },
  { form: 'JWT split across lines', text: `cookie:\n${jwt.slice(0, 50)}\n${jwt.slice(50)}` },
  { form: 'zero-width space in key', text: `use ${ghp.slice(0, 15)}${zwsp}${ghp.slice(15)}` },
  { form: 'zero-width space in key', text: `${anthropic.slice(0, 30)}${zwsp}${anthropic.slice(30, 60)}\u200d${anthropic.slice(60)}` },
  { form: 'zero-width space in password', text: `密码是${zwsp}Abc${zwsp}12345` },
  { form: 'soft hyphen in key', text: `stripe: ${stripeLive.slice(0, 10)}\u00ad${stripeLive.slice(10)}` },
  { form: 'full-width key', text: `ｐａｓｓｗｏｒｄ＝ｈｕｎｔｅｒ２２` },
  // Base64
  { form: 'base64 user:password', text: `my login in base64 is ${base64('mara:S3cretPass!')}` },
  { form: 'Authorization: Basic', text: `Authorization: Basic ${base64(`deploy:${alnum(16)}`)}` },
  { form: 'base64 of a token', text: `the token, base64-encoded: ${base64(ghp)}` },
  { form: 'base64 of a password line', text: `config blob ${base64('password=Winter2024!\nuser=mara')}` },
  // JWT and Authorization
  { form: 'JWT', text: `session cookie ${jwt}` },
  { form: 'Authorization: Bearer', text: `Authorization: Bearer ${alnum(40)}` },
  { form: 'curl Bearer', text: `curl -H "Authorization: Bearer ${alnum(36)}" https://api.example.com/v1/me` },
  { form: 'Bearer token', text: `send it with Bearer ${alnum(48)} in the header` },
  // Stripe
  { form: 'Stripe sk_live_', text: `Stripe live key: ${stripeLive}` },
  { form: 'Stripe rk_live_', text: `restricted key ${p('rk', '_live_')}${alnum(24)} for the reports job` },
  { form: 'Stripe sk_test_', text: `test mode uses ${p('sk', '_test_')}${alnum(24)}` },
  { form: 'Stripe webhook secret', text: `webhook signing: ${p('wh', 'sec_')}${alnum(32)}` },
  // Other services
  { form: 'SendGrid SG.', text: `SendGrid: SG.${alnum(22)}.${alnum(43)}` },
  { form: 'npm_', text: `publish token ${p('np', 'm_')}${alnum(36)}` },
  { form: '.npmrc _authToken', text: `//registry.npmjs.org/:_authToken=${hex(8)}-${hex(4)}-${hex(4)}-${hex(4)}-${hex(12)}` },
  { form: 'hf_', text: `Hugging Face token ${p('h', 'f_')}${letters(34)}` },
  { form: 'Telegram bot token', text: `the bot token is ${digits(10)}:AA${alnum(33)}` },
  { form: 'Telegram bot token', text: `TELEGRAM ${digits(9)}:AA${alnum(33)}` },
  { form: 'Azure AccountKey=', text: `DefaultEndpointsProtocol=https;AccountName=marastore;AccountKey=${b64(86)}==;EndpointSuffix=core.windows.net` },
  { form: 'Azure SharedAccessKey=', text: `Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=Root;SharedAccessKey=${b64(43)}=` },
  { form: 'Azure SAS', text: `https://marastore.blob.core.windows.net/c/f.txt?sv=2022-11-02&ss=b&sp=r&sig=${b64(44)}%3D` },
  { form: 'Twilio auth token', text: `Twilio account AC${hex(32)}, auth token ${hex(32)}` },
  { form: 'Twilio API key', text: `twilio api key ${p('S', 'K')}${hex(32)}` },
  { form: 'OpenAI project key', text: `OpenAI: ${openai}` },
  { form: 'OpenAI legacy key', text: `old key ${p('sk', '-')}${alnum(20)}T3BlbkFJ${alnum(20)}` },
  { form: 'Anthropic key', text: `Claude key ${anthropic}` },
  { form: 'Groq key', text: `groq: ${p('gs', 'k_')}${alnum(52)}` },
  { form: 'Linear key', text: `linear ${p('lin', '_api_')}${alnum(40)}` },
  { form: 'Notion token', text: `notion integration ${p('nt', 'n_')}${digits(11)}${alnum(35)}` },
  { form: 'private key (PEM)', text: `my server key:\n${pem}` },
  { form: 'Shopify token', text: `shop admin ${p('shp', 'at_')}${hex(32)}` },
  { form: 'GitHub classic token', text: `GitHub: ${ghp}` },
  { form: 'GitHub fine-grained token', text: `${p('github', '_pat_')}11${upper(20)}_${alnum(59)}` },
  { form: 'GitLab token', text: `gitlab ${p('gl', 'pat')}-${alnum(20)}` },
  { form: 'Grafana cloud token', text: `grafana ${p('gl', 'c_')}${b64(48)}` },
  { form: 'Grafana service account', text: `grafana sa ${p('gl', 'sa_')}${alnum(32)}_${hex(8)}` },
  {
    form: '1Password service token',
    text: `op token ${p('op', 's_')}${onePassword()}`,
  },
  { form: 'Vault token', text: `vault login ${p('hv', 's.')}${alnum(95)}` },
  { form: 'Vercel token', text: `vercel ${p('vc', 'p_')}${alnum(40)}` },
  { form: 'Databricks token', text: `databricks ${p('da', 'pi')}${hex(32)}` },
  { form: 'Docker PAT', text: `docker login -p ${p('dckr', '_pat_')}${alnum(27)}` },
  { form: 'Figma token', text: `figma ${p('fi', 'gd_')}${alnum(40)}` },
  { form: 'Google API key', text: `maps key ${p('AI', 'za')}${alnum(35)}` },
  // Assignments
  { form: 'secret assignment', text: 'DB_PASSWORD = "correct-horse"' },
  { form: 'secret assignment', text: `{"client_secret": "${alnum(24)}"}` },
  { form: 'secret assignment', text: `export GITHUB_TOKEN=${alnum(20)}` },
];

export const CONTROLS: SecretSample[] = [
  { form: 'UUID', text: 'The request id was 3f2a9c1e-7b4d-4e8a-9c2f-1a2b3c4d5e6f.' },
  { form: 'git commit hash', text: 'Fixed in commit 9fceb02d0ae598e95dc970b74767f19372d61af8 last week.' },
  { form: 'password manager', text: 'My password manager is great, I use it for everything.' },
  { form: 'API key concept', text: 'We discussed the API key concept: a key identifies the calling app.' },
  { form: '密码学', text: '她在大学学的是密码学。' },
  { form: '密码学 with a course code', text: '密码学课程编号是 CS2024，周三上课。' },
  { form: 'phone number', text: 'My phone number is +1 415 555 0132.' },
  { form: 'Chinese phone number', text: '有事打我电话 138 0013 8000' },
  { form: 'base64 image name', text: 'The file is iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg.png' },
  { form: 'product code', text: 'Product code SKU-4471-BLU-XL, order 2024-118-77831.' },
  { form: 'where the token lives', text: "The token is in 1Password under 'Work'." },
  { form: 'where the key lives', text: 'The API key is stored in the keychain, never in the notes.' },
  { form: 'max_tokens', text: 'max_tokens=4096 works best with this model' },
  { form: '忘了密码', text: '密码忘了，要去重置一下。' },
  { form: '密码规则', text: '设置密码的时候至少要八位。' },
  { form: 'md5 sum', text: 'The md5 of the file is d41d8cd98f00b204e9800998ecf8427e.' },
  { form: 'sk-learn', text: 'I use sk-learn for small models' },
  { form: 'flight and time', text: 'Flight BA0287 departs at 14:35 from gate B42.' },
  { form: 'password rule', text: 'The password must be at least 12 characters long.' },
  { form: 'a secret in prose', text: 'Her secret is that she loves karaoke.' },
  { form: 'docker digest', text: 'pinned the image to sha256:5d41402abc4b2a76b9719d911017c592a39e4f5e3c4b2a76b9719d911017c592' },
  { form: 'bearer bonds', text: 'Bearer bonds were common in the 1920s.' },
  { form: 'plain URL', text: 'See https://example.com/docs?page=2&lang=en for details.' },
  { form: 'WiFi name', text: 'The WiFi network is called Mara_Home_5G.' },
  { form: 'env placeholder', text: 'OPENAI_API_KEY=$OPENAI_API_KEY in the shell profile' },
  { form: 'Twilio mention', text: 'My Twilio account is for sending SMS reminders.' },
  { form: 'postgres URL without password', text: 'The local database is postgres://localhost:5432/anima.' },
  { form: 'token ring', text: 'Token ring networks were popular in the 80s.' },
  { form: 'ISBN', text: 'ISBN 978-0-13-468599-1 is the second edition.' },
  { form: 'base64 of a greeting', text: `She sent me ${base64('hello world, see you on Friday')} as a joke.` },
  { form: 'JWT explained', text: 'JWT is short for JSON Web Token; ours expire after 15 minutes.' },
  { form: 'Password: prose', text: 'Password: ask Mara' },
  { form: 'Token: prose', text: 'Token: pending review' },
  { form: 'secret ingredient', text: 'the secret ingredient is 2 tbsp of miso' },
  { form: 'verification code rule', text: '验证码5分钟内有效。' },
  { form: 'long compound word', text: 'Internationalisation and Localisation workshop notes' },
  { form: 'email address', text: 'write to mara.chen@example.org about the trip' },
  { form: 'IPv6 address', text: 'the printer is at fe80::1ff:fe23:4567:890a' },
  { form: 'key signature', text: 'key=C minor, tempo 120' },
  { form: 'a list across lines', text: 'shopping list:\nmilk\neggs2\nbread\nbutter' },
];
