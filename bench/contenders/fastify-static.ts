/** @fastify/static serving BENCH_FILES_DIR under /files/, for `npm run bench:streams`. */
import fastifyStatic from '@fastify/static';
import Fastify from 'fastify';
import { announce } from '../servers/announce.js';

const app = Fastify({ logger: false });
await app.register(fastifyStatic, { root: process.env.BENCH_FILES_DIR ?? '.', prefix: '/files/' });
announce({ address: await app.listen({ port: 0, host: '127.0.0.1' }) });
process.once('SIGTERM', () => void app.close().then(() => process.exit(0)));
