import type { Handlers } from '../context.js';
import { problem } from '../http/problems.js';

export const healthHandlers = {
  async getHealth() {
    return { status: 200, body: { status: 'ok' } };
  },

  async getReadiness(_request, ctx) {
    if (await ctx.deps.db.ping()) return { status: 200, body: { status: 'ok', database: 'ok' } };
    return problem('SERVICE_UNAVAILABLE', 'The database does not answer.', { headers: { 'Retry-After': '2' } });
  },
} satisfies Partial<Handlers>;
