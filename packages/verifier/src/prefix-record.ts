/**
 * A private lookup's record and its build statement: one verification, as a plain lookup's is.
 */
import type { AbsenceResult } from '#shared';
import type { AnswerVerification } from './verify-answer.ts';

/**
 * A record's verification with its build statement's steps in it, so the verdict and every step
 * agree as for a plain lookup: a prefix answer's record carries no log proof of its own, so its
 * log step (when the log was asked for, or a policy implies it) is the statement's entry in the
 * log, and its witnesses are that checkpoint's. The record's signature decides first, as it does
 * for a plain lookup.
 */
export function withStatementSteps(own: AnswerVerification, statement: AbsenceResult, logAsked: boolean): AnswerVerification {
  if (!logAsked) return own;
  const log: AnswerVerification['log'] = statement.valid
    ? statement.statementLog
      ? {
          valid: true,
          index: statement.statementLog.index,
          checkpoint: statement.statementLog.checkpoint,
          ...(statement.witnessedAt === undefined ? {} : { witnessedAt: statement.witnessedAt, cosigners: statement.cosigners ?? [] }),
        }
      : { valid: false, code: 'STATEMENT_NOT_LOGGED', message: 'the build statement was not proven in the log' }
    : statement;
  const witnessed = log.valid && log.witnessedAt !== undefined ? { witnessedAt: log.witnessedAt, cosigners: log.cosigners ?? [] } : null;
  return { ...own, code: own.code ?? (log.valid ? null : log.code), log, witnessed };
}
